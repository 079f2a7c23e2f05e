import type { Response } from 'express';
import { TesseraError } from '@tessera/common';

/**
 * Headers on every response the gateway itself writes (never on a PSP response passed through):
 * bodies hold token metadata or errors, which no cache or MIME sniffer should touch.
 */
export function setServiceHeaders(res: Response): void {
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('cache-control', 'no-store');
}

export function sendJson(res: Response, status: number, body: unknown): void {
  setServiceHeaders(res);
  res.status(status).json(body);
}

/** The documented envelope; `x-tessera-error` lets callers tell our errors from a PSP's. */
export function sendError(res: Response, err: TesseraError, requestId: string): void {
  setServiceHeaders(res);
  res.setHeader('x-tessera-error', err.code);
  res.status(err.status).json({ error: { ...err.toJSON(), requestId } });
}

import type { ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { isHopByHopHeader, isHttpFieldValue, isHttpToken, TesseraError, type Logger } from '@tessera/common';
import type { ForwardResponse__Output } from '@tessera/protos';
import { dryRunProxyCall, forwardToPsp, pspHostsOf, readPspHosts, type ProxyCallDeps, type ProxyCaller } from '../app/proxyCall';
import {
  attachCvc,
  checkedTokenParam,
  createToken,
  deleteToken,
  readToken,
  retainToken,
  updateToken,
  type TokenVault,
} from '../app/tokens';
import type { RecordEvent } from '../app/events';
import type { MerchantSettings } from '@tessera/merchant-data';
import { sendJson } from '@tessera/edge';
import { dryRunJson, tokenRecordJson } from './responseJson';
import { apiKeyOf, contextOf } from '@tessera/edge';
import { beforeHead, markPspPassThrough } from '@tessera/edge';
import { passedOnPspHeaderName } from '../domain/pspResponseHeaders';

export function tokenParam(req: Request): string {
  return checkedTokenParam(req.params.token);
}

/** What every vault call carries: the request id, so its logs join the gateway's. */
const callOptions = (res: Response): { requestId: string } => ({ requestId: contextOf(res).requestId });

const bodyOf = (req: Request): Record<string, unknown> => req.body as Record<string, unknown>;

/** The token use cases (app/tokens.ts); each route answers with what its caller may see. */
export function tokenRoutes(vault: TokenVault, recordEvent: RecordEvent) {
  return {
    /** POST /v1/token: a merchant's server with a secret key. */
    async create(req: Request, res: Response): Promise<void> {
      const record = await createToken(vault, apiKeyOf(res), bodyOf(req), callOptions(res), recordEvent);
      // An existing token answered (dedupe) was not created: 200, like a read.
      sendJson(res, record.deduplicated ? 200 : 201, tokenRecordJson(record));
    },

    async get(req: Request, res: Response): Promise<void> {
      sendJson(res, 200, tokenRecordJson(await readToken(vault, apiKeyOf(res), req.params.token, callOptions(res))));
    },

    /** PATCH /v1/token/{token}: idempotent by nature, so no Idempotency-Key handling. */
    async update(req: Request, res: Response): Promise<void> {
      const record = await updateToken(vault, apiKeyOf(res), req.params.token, bodyOf(req), callOptions(res), recordEvent);
      sendJson(res, 200, tokenRecordJson(record));
    },

    /** POST /v1/token/{token}/cvc: a merchant's server (secret key) re-collected the CVV. */
    async recollectCvv(req: Request, res: Response): Promise<void> {
      const record = await attachCvc(vault, apiKeyOf(res), req.params.token, bodyOf(req), callOptions(res));
      sendJson(res, 200, tokenRecordJson(record));
    },

    /** A secret-key route: publishable keys are refused by authentication before this runs. */
    async retain(req: Request, res: Response): Promise<void> {
      const record = await retainToken(vault, apiKeyOf(res), req.params.token, bodyOf(req), callOptions(res), recordEvent);
      sendJson(res, 200, tokenRecordJson(record));
    },

    async remove(req: Request, res: Response): Promise<void> {
      await deleteToken(vault, apiKeyOf(res), req.params.token, callOptions(res), recordEvent);
      res.setHeader('x-content-type-options', 'nosniff');
      res.setHeader('cache-control', 'no-store');
      res.status(204).end();
    },
  };
}

/** Framing is ours to decide (we send the whole body at once), so the PSP's framing headers go. */
function isFramingHeader(lowerCaseName: string): boolean {
  return lowerCaseName === 'content-length' || isHopByHopHeader(lowerCaseName);
}

function elapsedMs(res: Response): string {
  return (Number(process.hrtime.bigint() - contextOf(res).startedAt) / 1e6).toFixed(1);
}

function setTotalMs(res: ServerResponse): void {
  res.setHeader('x-tessera-total-ms', elapsedMs(res as Response));
}

/**
 * Timing and trace headers on every /v1/proxy response, ours or the PSP's: the request id and
 * the gateway's total time (the PSP time is added by the route, when there was a PSP answer).
 * x-tessera-total-ms is written at the last moment, when the status line goes out, so errors
 * raised by auth or validation carry it too.
 */
export function proxyTimingHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('x-tessera-request-id', contextOf(res).requestId);
  beforeHead(res, setTotalMs);
  next();
}

export function proxyRoutes(deps: ProxyCallDeps) {
  /** Allowlists read during authentication, by response; each is taken once. */
  const prefetched = new WeakMap<Response, Promise<string[]>>();
  const callerOf = (req: Request, res: Response): ProxyCaller => {
    const ctx = contextOf(res);
    const key = apiKeyOf(res);
    const started = prefetched.get(res);
    prefetched.delete(res);
    return {
      key,
      requestId: ctx.requestId,
      route: (req.route as { path?: string } | undefined)?.path ?? null,
      allowedHosts: started ?? readPspHosts(deps, key.merchantId),
      noteCall: (call) => {
        ctx.proxyCall = call;
      },
    };
  };

  return {
    /**
     * For the auth middleware (AuthDeps.merchantSettings): the allowlist as the key lookup read it,
     * or a read started alongside the rate-limit count. A request refused before the route never
     * awaits it, hence the no-op catch; the route awaits it, so a store failure still fails the call.
     */
    takeMerchantSettings(record: { merchantId: string }, res: Response, read?: { settings: MerchantSettings | undefined }): void {
      const hosts = read === undefined ? readPspHosts(deps, record.merchantId) : Promise.resolve(pspHostsOf(read.settings));
      hosts.catch(() => undefined);
      prefetched.set(res, hosts);
    },

    async forward(req: Request, res: Response): Promise<void> {
      const result = await forwardToPsp(deps, callerOf(req, res), bodyOf(req));
      res.setHeader('x-tessera-psp-ms', result.pspMs.toFixed(1));
      sendPspResponse(res, result, deps.logger, contextOf(res).requestId);
    },

    /** Same body as forward; answers what would be sent, masked. The PSP is never contacted. */
    async dryRun(req: Request, res: Response): Promise<void> {
      sendJson(res, 200, dryRunJson(await dryRunProxyCall(deps, callerOf(req, res), bodyOf(req))));
    },
  };
}

/**
 * Passes the PSP's answer through unchanged: its status, every header in order (repeated ones
 * kept) and the body bytes, except that headers named like Tessera's are renamed and headers
 * acting on the gateway's origin are dropped (domain/pspResponseHeaders.ts). Node's own header
 * helpers are used rather than Express's `res.set`, which would rewrite a Content-Type by adding
 * a charset.
 */
export function sendPspResponse(res: Response, result: ForwardResponse__Output, logger: Logger, requestId: string): void {
  if (!Number.isInteger(result.status) || result.status < 200 || result.status > 599) {
    throw new TesseraError('internal_error', { cause: new Error(`proxy returned an unusable status ${result.status}`) });
  }
  res.sendDate = false;
  markPspPassThrough(res);
  let skipped = 0;
  for (const { name, value } of result.headers) {
    const passedOn = passedOnPspHeaderName(name);
    if (passedOn === undefined || isFramingHeader(name.toLowerCase()) || !isHttpToken(name) || !isHttpFieldValue(value)) {
      skipped++;
      continue;
    }
    res.appendHeader(passedOn, value);
  }
  if (skipped > 0) logger.debug({ requestId, skipped }, 'dropped PSP framing, origin-wide or malformed headers');
  res.statusCode = result.status;
  const body = Buffer.isBuffer(result.body) ? result.body : Buffer.from(result.body ?? []);
  if (result.status !== 204 && result.status !== 304) res.setHeader('content-length', body.length);
  res.end(body);
}

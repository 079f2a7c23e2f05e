import type { Request, Response } from 'express';
import { TesseraError, validateCard, type Logger } from '@tessera/common';
import type { ForwardResponse__Output, TokenRecord__Output } from '@tessera/protos';
import { parseCardInput, parseProxyRequest } from '../domain/requestSchemas';
import { sendJson } from './envelope';
import { apiKeyOf, contextOf } from './requestContext';
import type { ProxyApi, VaultApi } from './upstreams';

export interface TokenRecordJson {
  token: string;
  last4: string;
  brand: string;
  expiryMonth: number;
  expiryYear: number;
  createdAt: string;
  expiresAt: string | null;
  cvvAvailable: boolean;
  holderNameAvailable: boolean;
}

export function tokenRecordJson(record: TokenRecord__Output): TokenRecordJson {
  return {
    token: record.token,
    last4: record.last4,
    brand: record.brand,
    expiryMonth: record.expiryMonth,
    expiryYear: record.expiryYear,
    createdAt: record.createdAt,
    expiresAt: record.expiresAt === '' ? null : record.expiresAt,
    cvvAvailable: record.cvvAvailable,
    holderNameAvailable: record.holderNameAvailable,
  };
}

function tokenParam(req: Request): string {
  const token = req.params.token;
  // Longer than any token we issue: answer like any unknown token without asking the vault.
  if (typeof token !== 'string' || token.length === 0 || token.length > 256) throw new TesseraError('token_not_found');
  return token;
}

export function tokenRoutes(vault: VaultApi) {
  return {
    async create(req: Request, res: Response): Promise<void> {
      const key = apiKeyOf(res);
      const input = parseCardInput(req.body as Record<string, unknown>);
      const card = validateCard(input, key.mode);
      const record = await vault.tokenize(
        {
          merchantId: key.merchantId,
          number: card.number,
          holderName: card.holderName ?? '',
          expiryMonth: card.expiryMonth,
          expiryYear: card.expiryYear,
          cvv: card.cvv ?? '',
        },
        { requestId: contextOf(res).requestId },
      );
      sendJson(res, 201, tokenRecordJson(record));
    },

    async get(req: Request, res: Response): Promise<void> {
      const key = apiKeyOf(res);
      const record = await vault.getToken({ merchantId: key.merchantId, token: tokenParam(req) }, { requestId: contextOf(res).requestId });
      sendJson(res, 200, tokenRecordJson(record));
    },

    async remove(req: Request, res: Response): Promise<void> {
      const key = apiKeyOf(res);
      await vault.deleteToken({ merchantId: key.merchantId, token: tokenParam(req) }, { requestId: contextOf(res).requestId });
      res.setHeader('x-content-type-options', 'nosniff');
      res.setHeader('cache-control', 'no-store');
      res.status(204).end();
    },
  };
}

/** Framing is ours to decide (we send the whole body at once), so the PSP's framing headers go. */
const FRAMING_HEADERS = new Set([
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'upgrade',
  'te',
  'trailer',
]);
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const INVALID_HEADER_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

export function proxyRoutes(proxy: ProxyApi, logger: Logger) {
  return {
    async forward(req: Request, res: Response): Promise<void> {
      const key = apiKeyOf(res);
      const ctx = contextOf(res);
      const input = parseProxyRequest(req.body as Record<string, unknown>);
      const result = await proxy.forward(
        {
          merchantId: key.merchantId,
          mode: key.mode,
          token: input.token,
          method: input.method,
          url: input.pspUrl,
          headers: Object.entries(input.pspHeaders).map(([name, value]) => ({ name, value })),
          bodyTemplate: input.pspBody ?? '',
          hasBody: input.pspBody !== undefined,
        },
        { requestId: ctx.requestId },
      );
      sendPspResponse(res, result, logger, ctx.requestId);
    },
  };
}

/**
 * Passes the PSP's answer through unchanged: its status, every header in order (repeated ones
 * kept) and the body bytes. Node's own header helpers are used rather than Express's `res.set`,
 * which would rewrite a Content-Type by adding a charset.
 */
export function sendPspResponse(res: Response, result: ForwardResponse__Output, logger: Logger, requestId: string): void {
  if (!Number.isInteger(result.status) || result.status < 200 || result.status > 599) {
    throw new TesseraError('internal_error', { cause: new Error(`proxy returned an unusable status ${result.status}`) });
  }
  res.sendDate = false;
  let skipped = 0;
  for (const { name, value } of result.headers) {
    if (FRAMING_HEADERS.has(name.toLowerCase()) || !HEADER_NAME.test(name) || INVALID_HEADER_VALUE.test(value)) {
      skipped++;
      continue;
    }
    res.appendHeader(name, value);
  }
  if (skipped > 0) logger.debug({ requestId, skipped }, 'dropped PSP framing or malformed headers');
  res.statusCode = result.status;
  const body = Buffer.isBuffer(result.body) ? result.body : Buffer.from(result.body ?? []);
  if (result.status !== 204 && result.status !== 304) res.setHeader('content-length', body.length);
  res.end(body);
}

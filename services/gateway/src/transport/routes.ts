import type { ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { isHopByHopHeader, isHttpFieldValue, isHttpToken, TesseraError, validateCard, validateExpiry, type Logger } from '@tessera/common';
import type { ForwardCall, ForwardResponse__Output, TokenRecord__Output } from '@tessera/protos';
import {
  parseCardInput,
  parseCvcInput,
  parseProxyRequest,
  parseRetainRequest,
  parseTokenCreate,
  parseTokenUpdate,
} from '../domain/requestSchemas';
import { tokenizeRequestFor } from '../domain/tokenizeRequest';
import { sendJson } from './envelope';
import { browserTokenJson, dryRunJson, tokenRecordJson } from './responseJson';
import { apiKeyOf, contextOf } from './requestContext';
import type { ProxyApi, VaultApi } from './upstreams';
import { buildDetokenizationRecord } from '../domain/detokenizationAudit';
import type { DetokenizationLog } from '../store/detokenizationLog';
import type { MerchantSettings, MerchantSettingsStore } from '../store/merchantSettingsStore';
import { beforeHead, markPspPassThrough } from './securityHeaders';
import { passedOnPspHeaderName } from '../domain/pspResponseHeaders';
import type { ProxyCallFacts } from '../domain/requestLog';

export function tokenParam(req: Request): string {
  const token = req.params.token;
  // Longer than any token we issue: answer like any unknown token without asking the vault.
  if (typeof token !== 'string' || token.length === 0 || token.length > 256) throw new TesseraError('token_not_found');
  return token;
}

/**
 * The path's token as the key's merchant and mode ask for it: a token answers only to keys of
 * the merchant and mode that created it (test and live never meet).
 */
function ownedToken(req: Request, res: Response): { merchantId: string; mode: ReturnType<typeof apiKeyOf>['mode']; token: string } {
  const key = apiKeyOf(res);
  return { merchantId: key.merchantId, mode: key.mode, token: tokenParam(req) };
}

/** What every vault call carries: the request id, so its logs join the gateway's. */
const callOptions = (res: Response): { requestId: string } => ({ requestId: contextOf(res).requestId });

/** Called with each valid card a browser sends, before it is tokenized; throws to refuse it (card-testing limit). */
export type BrowserCardGate = (res: Response, number: string) => Promise<void>;

export function tokenRoutes(vault: VaultApi, browserCardGate?: BrowserCardGate) {
  /**
   * One path for both ways a card arrives: same schema, same card rules, same vault call. Each
   * route then answers with what its caller may see (a secret key the record, a browser the least).
   */
  const tokenize = async (req: Request, res: Response, provisional: boolean): Promise<TokenRecord__Output> => {
    const key = apiKeyOf(res);
    const body = req.body as Record<string, unknown>;
    // `dedupe` is a merchant server's choice: the browser route's schema does not know it.
    const { dedupe, ...input } = provisional ? { ...parseCardInput(body), dedupe: undefined } : parseTokenCreate(body);
    const card = validateCard(input, key.mode);
    if (provisional) await browserCardGate?.(res, card.number);
    return vault.tokenize(
      { ...tokenizeRequestFor(card, key, provisional, contextOf(res).provisionalTtlSeconds), ...(dedupe === true ? { dedupe } : {}) },
      callOptions(res),
    );
  };
  return {
    /** POST /v1/token: a merchant's server with a secret key; the token is ordinary at once. */
    async create(req: Request, res: Response): Promise<void> {
      const record = await tokenize(req, res, false);
      // An existing token answered (dedupe) was not created: 200, like a read.
      sendJson(res, record.deduplicated ? 200 : 201, tokenRecordJson(record));
    },

    /**
     * POST /v1/browser/tokens: Tessera's card fields with a publishable key. The token is
     * provisional (it expires after BROWSER_TOKEN_TTL_SECONDS unless the merchant's server
     * retains it), so a stolen publishable key fills nothing lasting; the answer is the browser's
     * own, with nothing derived from the number beyond brand and last 4 (responseJson.ts).
     */
    async createInBrowser(req: Request, res: Response): Promise<void> {
      sendJson(res, 201, browserTokenJson(await tokenize(req, res, true)));
    },

    async get(req: Request, res: Response): Promise<void> {
      const record = await vault.getToken(ownedToken(req, res), callOptions(res));
      sendJson(res, 200, tokenRecordJson(record));
    },

    /**
     * PATCH /v1/token/{token}: a re-issued card (same number) gets its new expiry and/or holder
     * name, under the rules of a new card. Idempotent by nature (the same body gives the same
     * record), so no Idempotency-Key handling.
     */
    async update(req: Request, res: Response): Promise<void> {
      const input = parseTokenUpdate(req.body as Record<string, unknown>);
      if (input.expiryMonth !== undefined && input.expiryYear !== undefined) validateExpiry(input.expiryMonth, input.expiryYear);
      const record = await vault.updateToken(
        {
          ...ownedToken(req, res),
          expiryMonth: input.expiryMonth ?? 0,
          expiryYear: input.expiryYear ?? 0,
          holderName: input.holderName ?? '',
        },
        callOptions(res),
      );
      sendJson(res, 200, tokenRecordJson(record));
    },

    /**
     * POST /v1/token/{token}/cvc: a merchant's server (secret key) re-collected the CVV. The
     * browser's way is the CVC-only field under a CVC session (transport/cvcSessions.ts).
     */
    async recollectCvv(req: Request, res: Response): Promise<void> {
      const { cvv } = parseCvcInput(req.body as Record<string, unknown>);
      const record = await vault.attachCvv(
        { ...ownedToken(req, res), cvv: String(cvv), cvvIsInteger: typeof cvv === 'number' },
        callOptions(res),
      );
      sendJson(res, 200, tokenRecordJson(record));
    },

    /**
     * Makes a provisional (browser-made) token an ordinary one; retaining an ordinary or already
     * retained token answers the same record. A normal secret-key route: publishable keys are
     * refused by authentication before this runs.
     */
    async retain(req: Request, res: Response): Promise<void> {
      parseRetainRequest(req.body as Record<string, unknown>);
      const record = await vault.retainToken(ownedToken(req, res), callOptions(res));
      sendJson(res, 200, tokenRecordJson(record));
    },

    async remove(req: Request, res: Response): Promise<void> {
      await vault.deleteToken(ownedToken(req, res), callOptions(res));
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

function forwardRequestOf(req: Request, res: Response, allowedHosts: string[]): ForwardCall {
  const key = apiKeyOf(res);
  const input = parseProxyRequest(req.body as Record<string, unknown>);
  return {
    allowedHosts,
    merchantId: key.merchantId,
    mode: key.mode,
    token: input.token,
    method: input.method,
    url: input.pspUrl,
    headers: Object.entries(input.pspHeaders).map(([name, value]) => ({ name, value })),
    bodyTemplate: input.pspBody ?? '',
    hasBody: input.pspBody !== undefined,
  };
}

/** The call as the request log shows it (domain/requestLog.ts masks it later); filled in as the call goes. */
function noteProxyCall(res: Response, request: ForwardCall): ProxyCallFacts {
  const call: ProxyCallFacts = {
    pspUrl: request.url,
    method: request.method,
    token: request.token,
    bodyTemplate: request.hasBody ? request.bodyTemplate : null,
    headerNames: request.headers.map((h) => h.name),
    pspStatus: null,
    pspMs: null,
  };
  contextOf(res).proxyCall = call;
  return call;
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

export function proxyRoutes(
  proxy: ProxyApi,
  logger: Logger,
  detokenizations?: DetokenizationLog,
  merchantSettings?: Pick<MerchantSettingsStore, 'get'>,
) {
  /** Allowlists read during authentication, by response; each is taken once. */
  const prefetched = new WeakMap<Response, Promise<string[]>>();
  const readAllowedHosts = async (merchantId: string): Promise<string[]> =>
    merchantSettings === undefined ? [] : ((await merchantSettings.get(merchantId))?.pspHosts ?? []);
  /** The merchant's PSP host allowlist, enforced by the proxy; a store failure fails the call (503). */
  const allowedHostsOf = (res: Response): Promise<string[]> => {
    const started = prefetched.get(res);
    prefetched.delete(res);
    return started ?? readAllowedHosts(apiKeyOf(res).merchantId);
  };
  /**
   * Every call that asks the vault to render card data (a body was given) is audited, whatever
   * its outcome. Written without holding up the answer; a failed write is logged (ids only).
   */
  const audit = (req: Request, res: Response, request: ForwardCall, status: number, code: string | null): void => {
    if (detokenizations === undefined || !request.hasBody) return;
    const ctx = contextOf(res);
    const record = buildDetokenizationRecord({
      requestId: ctx.requestId,
      merchantId: request.merchantId,
      keyId: apiKeyOf(res).id,
      token: request.token,
      pspUrl: request.url,
      method: request.method,
      status,
      code,
      now: new Date(),
    });
    detokenizations.append(record).catch((err: unknown) => {
      logger.error(
        { err, requestId: ctx.requestId, auditId: record.id, route: req.route?.path ?? null },
        'could not write the detokenization audit entry',
      );
    });
  };

  return {
    /**
     * For the auth middleware (AuthDeps.merchantSettings): the allowlist as the key lookup read it,
     * or a read started alongside the rate-limit count. A request refused before the route never
     * awaits it, hence the no-op catch; the route awaits it, so a store failure still fails the call.
     */
    takeMerchantSettings(record: { merchantId: string }, res: Response, read?: { settings: MerchantSettings | undefined }): void {
      const hosts = read === undefined ? readAllowedHosts(record.merchantId) : Promise.resolve(read.settings?.pspHosts ?? []);
      hosts.catch(() => undefined);
      prefetched.set(res, hosts);
    },

    async forward(req: Request, res: Response): Promise<void> {
      const ctx = contextOf(res);
      const request = forwardRequestOf(req, res, await allowedHostsOf(res));
      const call = noteProxyCall(res, request);
      let result: ForwardResponse__Output;
      try {
        result = await proxy.forward(request, { requestId: ctx.requestId });
      } catch (err) {
        const error = err instanceof TesseraError ? err : new TesseraError('internal_error', { cause: err });
        audit(req, res, request, error.status, error.code);
        throw err;
      }
      audit(req, res, request, result.status, null);
      call.pspStatus = result.status;
      call.pspMs = result.pspMs;
      res.setHeader('x-tessera-psp-ms', result.pspMs.toFixed(1));
      sendPspResponse(res, result, logger, ctx.requestId);
    },

    /** Same body as forward; answers what would be sent, masked. The PSP is never contacted. */
    async dryRun(req: Request, res: Response): Promise<void> {
      const ctx = contextOf(res);
      const request = forwardRequestOf(req, res, await allowedHostsOf(res));
      noteProxyCall(res, request);
      const result = await proxy.dryRun(request, { requestId: ctx.requestId });
      sendJson(res, 200, dryRunJson(result));
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

import { performance } from 'node:perf_hooks';
import { TesseraError, type Logger } from '@tessera/common';
import type { CompletionCall } from '@tessera/protos';
import { logHostOf, parseMode, type DestinationPolicy } from '../domain/destinationPolicy';
import { filterRequestHeaders } from '../domain/headers';
import {
  cappedTimeoutMs,
  preflightDestination,
  sendToPsp,
  type PspCancellation,
  type PspEgress,
  type PspResponse,
} from '../egress/pspEgress';

export interface MerchantPostDeps {
  policy: DestinationPolicy;
  egress: PspEgress;
  logger: Logger;
}

/** What the hosted page's completion call and a webhook delivery send: a caller's JSON body to a merchant's URL. */
export type MerchantPost = CompletionCall;

/**
 * One POST of JSON to a merchant's own server (the completion endpoint, a webhook endpoint): the
 * same destination rules as a PSP call (URL decision, then the egress pre-flight of every address,
 * pinned while the exchange runs), but no vault: the body is the caller's, sent as it is, and holds
 * a token at most, never card data. The deadline is the caller's, at most the PSP's
 * (PSP_TIMEOUT_MS). Logs carry the host, status and timings; never the path, headers or bodies.
 */
export async function postToMerchant(
  deps: MerchantPostDeps,
  input: MerchantPost,
  options: {
    /** Log message of the call, e.g. 'completion call'; failures log `<what> failed`. */
    what: string;
    maxResponseBytes: number;
    /** Read at most maxResponseBytes and drop the rest, rather than fail the call. */
    truncateResponse?: boolean;
    /** A call that worked is logged at info (default) or debug (frequent ones). */
    successLevel?: 'info' | 'debug';
    /** A refused or failed call is logged at warn (default) or info (a receiver's outage is the merchant's). */
    failureLevel?: 'warn' | 'info';
  },
  ctx: { requestId?: string; cancellation?: PspCancellation } = {},
): Promise<PspResponse> {
  const started = performance.now();
  const logFields: Record<string, unknown> = { requestId: ctx.requestId, merchantId: input.merchantId };
  try {
    const url = deps.policy.checkUrl(input.url, parseMode(input.mode), []);
    logFields.host = url.logHost;
    const headers = [
      ...filterRequestHeaders(input.headers).filter((h) => h.name.toLowerCase() !== 'content-type'),
      { name: 'content-type', value: 'application/json' },
    ];
    const destination = await preflightDestination(deps.egress, url);
    const timeoutMs = cappedTimeoutMs(deps.egress, input.timeoutMs);
    const res = await sendToPsp(deps.egress, {
      destination,
      method: 'POST',
      headers,
      body: input.body,
      timeoutMs,
      maxResponseBytes: options.maxResponseBytes,
      ...(options.truncateResponse ? { truncateResponse: true } : {}),
      ...(ctx.cancellation ? { cancellation: ctx.cancellation } : {}),
    });
    deps.logger[options.successLevel ?? 'info'](
      { ...logFields, status: res.status, merchantMs: Math.round(res.pspMs), durationMs: Math.round(performance.now() - started) },
      options.what,
    );
    return res;
  } catch (err) {
    const code = err instanceof TesseraError ? err.code : 'internal_error';
    if (code === 'psp_destination_forbidden' && logFields.host === undefined) logFields.host = logHostOf(input.url);
    const fields = { ...logFields, code, durationMs: Math.round(performance.now() - started) };
    if (code === 'internal_error') deps.logger.error({ ...fields, err }, `${options.what} failed`);
    else deps.logger[options.failureLevel ?? 'warn'](fields, `${options.what} failed`);
    throw err;
  }
}

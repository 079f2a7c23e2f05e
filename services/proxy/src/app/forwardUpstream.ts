import { finished } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { TesseraError } from '@tessera/common';
import type { UpstreamCall } from '@tessera/protos';
import { refuseCardNumbers } from '../domain/cardData';
import { logHostOf, parseMode } from '../domain/destinationPolicy';
import { filterRequestHeaders } from '../domain/headers';
import { parseUpstreamMethod } from '../domain/method';
import { cancelledError, cappedTimeoutMs, preflightDestination, type PspCancellation } from '../egress/pspEgress';
import { streamFromUpstream, type StreamedResponse } from '../egress/upstreamExchange';
import type { MerchantPostDeps } from './merchantPost';

export type UpstreamDeps = MerchantPostDeps;

/**
 * An inbound route's rewritten request to the merchant's upstream (ADR 0013, point 2), for the
 * inbound service, which has no egress of its own. The rules of every call out (URL decision,
 * pre-flight of every address, pinned while the exchange runs, no redirects, no hop-by-hop
 * headers), and first a check that the body and the query hold no card-number-like run: the route's
 * filters should have taken every card number out, and the process that owns egress makes sure.
 * No vault: what goes out is the caller's, aliases at most.
 *
 * Resolves with the head; the body streams on (egress/upstreamExchange.ts). Logs carry the host,
 * method, status, timings and byte count once the body has ended; never the path, query, headers
 * or bodies.
 */
export async function forwardUpstream(
  deps: UpstreamDeps,
  input: UpstreamCall,
  ctx: { requestId?: string; cancellation?: PspCancellation } = {},
): Promise<StreamedResponse> {
  const started = performance.now();
  const logFields: Record<string, unknown> = { requestId: ctx.requestId, merchantId: input.merchantId, routeId: input.routeId };
  const failed = (err: unknown): void => {
    const code = err instanceof TesseraError ? err.code : 'internal_error';
    if (code === 'psp_destination_forbidden' && logFields.host === undefined) logFields.host = logHostOf(input.url);
    const fields = { ...logFields, code, durationMs: Math.round(performance.now() - started) };
    if (code === 'internal_error') deps.logger.error({ ...fields, err }, 'upstream exchange failed');
    else deps.logger.warn(fields, 'upstream exchange failed');
  };
  try {
    const method = parseUpstreamMethod(input.method);
    logFields.method = method;
    const url = deps.policy.checkUrl(input.url, parseMode(input.mode), []);
    logFields.host = url.logHost;
    const headers = filterRequestHeaders(input.headers);
    refuseCardNumbers(url.url, input.body, input.cardAliases);
    const destination = await preflightDestination(deps.egress, url);
    const res = await streamFromUpstream(deps.egress, {
      destination,
      method,
      headers,
      body: input.body,
      timeoutMs: cappedTimeoutMs(deps.egress, input.timeoutMs),
      ...(ctx.cancellation ? { cancellation: ctx.cancellation } : {}),
    });
    logFields.status = res.status;
    logFields.headMs = Math.round(res.headMs);
    finished(res.body, (err) => {
      logFields.bytes = res.body.bytes;
      // A body destroyed without an error (ERR_STREAM_PREMATURE_CLOSE) was let go by its reader: a cancel.
      if (err) failed(err instanceof TesseraError ? err : cancelledError());
      else deps.logger.info({ ...logFields, durationMs: Math.round(performance.now() - started) }, 'upstream exchange');
    });
    return res;
  } catch (err) {
    failed(err);
    throw err;
  }
}

import { performance } from 'node:perf_hooks';
import { TesseraError, type Logger } from '@tessera/common';
import type { CompletionCall, CompletionCallAnswer } from '@tessera/protos';
import { logHostOf, parseMode, type DestinationPolicy } from '../domain/destinationPolicy';
import { filterRequestHeaders } from '../domain/headers';
import { preflightDestination, sendToPsp, type PspCancellation, type PspEgress } from '../egress/pspEgress';

export interface CompletionDeps {
  policy: DestinationPolicy;
  egress: PspEgress;
  logger: Logger;
  /** MERCHANT_CALL_MAX_RESPONSE_BYTES: a completion endpoint answers a line of JSON; more fails the call. */
  maxResponseBytes: number;
}

/**
 * One call to a merchant's completion endpoint for the hosted payment page (docs/api.md, "The
 * completion call"). The same destination rules as a PSP call (URL decision, then the egress
 * pre-flight of every address), but no vault: the body is the caller's, sent as it is, and holds
 * a token, never card data. The deadline is the caller's, at most the PSP's (PSP_TIMEOUT_MS).
 * Logs carry the host, status and timings; never the path, headers or bodies.
 */
export async function callCompletion(
  deps: CompletionDeps,
  input: CompletionCall,
  ctx: { requestId?: string; cancellation?: PspCancellation } = {},
): Promise<CompletionCallAnswer> {
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
    const timeoutMs = input.timeoutMs > 0 ? Math.min(input.timeoutMs, deps.egress.timeoutMs) : deps.egress.timeoutMs;
    const res = await sendToPsp(deps.egress, {
      destination,
      method: 'POST',
      headers,
      body: input.body,
      timeoutMs,
      maxResponseBytes: deps.maxResponseBytes,
      ...(ctx.cancellation ? { cancellation: ctx.cancellation } : {}),
    });
    deps.logger.info(
      { ...logFields, status: res.status, merchantMs: Math.round(res.pspMs), durationMs: Math.round(performance.now() - started) },
      'completion call',
    );
    return { status: res.status, body: res.body };
  } catch (err) {
    const code = err instanceof TesseraError ? err.code : 'internal_error';
    if (code === 'psp_destination_forbidden' && logFields.host === undefined) logFields.host = logHostOf(input.url);
    const fields = { ...logFields, code, durationMs: Math.round(performance.now() - started) };
    if (code === 'internal_error') deps.logger.error({ ...fields, err }, 'completion call failed');
    else deps.logger.warn(fields, 'completion call failed');
    throw err;
  }
}

import { performance } from 'node:perf_hooks';
import { TesseraError, type Logger } from '@tessera/common';
import type { ForwardCall, ForwardResponse } from '@tessera/protos';
import { logHostOf, parseMode, type DestinationPolicy } from '../domain/destinationPolicy';
import { filterRequestHeaders, type HeaderEntry } from '../domain/headers';
import { parsePspMethod } from '../domain/method';
import { preflightDestination, sendToPsp, type PspCancellation, type PspEgress, type PspResponse } from '../egress/pspEgress';
import { renderInputOf, type VaultPort } from './vaultPort';

export interface ForwardDeps {
  policy: DestinationPolicy;
  egress: PspEgress;
  vault: Pick<VaultPort, 'render'>;
  logger: Logger;
}

export interface ForwardContext {
  requestId?: string;
  cancellation?: PspCancellation;
}

function causeCode(err: unknown): string | undefined {
  const cause = (err as { cause?: { code?: unknown } } | null)?.cause;
  return typeof cause?.code === 'string' ? cause.code : undefined;
}

/** What a checked exchange is about, before its body is rendered. */
export interface CheckedExchangeInput {
  merchantId: string;
  /** The key's mode as the gateway sent it ("test"/"live"). */
  mode: string;
  method: string;
  url: string;
  /** The merchant's PSP host allowlist (Forward) or the route's outbound hosts (ForwardRoute); empty: any public host. */
  allowedHosts: readonly string[];
  headers: readonly HeaderEntry[];
}

/**
 * Fills in the body once the destination has passed, from the filtered headers (the content type
 * decides the encoding); undefined: no body. `extra` comes back with the PSP's answer.
 */
export type RenderStep<Extra> = (headers: readonly HeaderEntry[]) => Promise<{ body: Buffer | undefined; extra: Extra }>;

/**
 * One PSP call under the destination policy, shared by Forward (placeholders) and ForwardRoute
 * (a route's aliases). Order matters for PCI scope: the destination is fully checked (the URL
 * decision, then the egress pre-flight: DNS and every address) before the vault is asked for
 * card data, so a refused destination never causes a render nor uses up a one-time CVV; the
 * connection then goes to the addresses the pre-flight checked. The rendered body lives only in
 * this function's memory.
 *
 * Logs carry the PSP host, method, status and timings; never the path, query, header values
 * (they hold PSP credentials) or bodies.
 */
export async function sendCheckedExchange<Extra>(
  deps: Omit<ForwardDeps, 'vault'>,
  input: CheckedExchangeInput,
  render: RenderStep<Extra>,
  ctx: ForwardContext = {},
): Promise<PspResponse & { extra: Extra }> {
  const started = performance.now();
  const log = deps.logger;
  const logFields: Record<string, unknown> = { requestId: ctx.requestId, merchantId: input.merchantId };
  try {
    const method = parsePspMethod(input.method);
    logFields.method = method;
    const url = deps.policy.checkUrl(input.url, parseMode(input.mode), input.allowedHosts);
    logFields.pspHost = url.logHost;
    const headers = filterRequestHeaders(input.headers);
    const destination = await preflightDestination(deps.egress, url);

    const { body, extra } = await render(headers);

    const res = await sendToPsp(deps.egress, {
      destination,
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
      ...(ctx.cancellation ? { cancellation: ctx.cancellation } : {}),
    });
    log.info(
      { ...logFields, status: res.status, pspMs: Math.round(res.pspMs), durationMs: Math.round(performance.now() - started) },
      'psp exchange',
    );
    return { ...res, extra };
  } catch (err) {
    const code = err instanceof TesseraError ? err.code : 'internal_error';
    // A host the URL decision refused (allowlist, port) is still named in the log.
    if (code === 'psp_destination_forbidden' && logFields.pspHost === undefined) logFields.pspHost = logHostOf(input.url);
    const fields = { ...logFields, code, cause: causeCode(err), durationMs: Math.round(performance.now() - started) };
    if (code === 'internal_error') log.error({ ...fields, err }, 'psp exchange failed');
    else log.warn(fields, 'psp exchange failed');
    throw err;
  }
}

/** One proxied PSP call of /v1/proxy: the body template's placeholders rendered by the vault's Render. */
export async function forwardToPsp(deps: ForwardDeps, input: ForwardCall, ctx: ForwardContext = {}): Promise<ForwardResponse> {
  const res = await sendCheckedExchange(
    deps,
    { ...input, allowedHosts: input.allowedHosts ?? [] },
    async (headers) => {
      const renderInput = renderInputOf(input, headers);
      return { body: renderInput === undefined ? undefined : await deps.vault.render(renderInput, ctx.requestId), extra: undefined };
    },
    ctx,
  );
  return { status: res.status, headers: res.headers, body: res.body, pspMs: res.pspMs };
}

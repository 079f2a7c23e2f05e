import { performance } from 'node:perf_hooks';
import { TesseraError, type Logger } from '@tessera/common';
import type { ForwardRequest__Output, ForwardResponse } from '@tessera/protos';
import { checkDestinationUrl, parseMode } from '../domain/destinationUrl';
import { filterRequestHeaders, findContentType } from '../domain/headers';
import { assertHostOnAllowlist } from '../domain/hostAllowlist';
import { parsePspMethod } from '../domain/method';
import { checkDestinationAddresses, sendToPsp, type PspCancellation, type PspEgress } from '../egress/pspEgress';
import type { VaultPort } from '../transport/vaultClient';

export interface ForwardDeps {
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

/**
 * One proxied PSP call. Order matters for PCI scope: the destination is fully checked (URL,
 * DNS, address classes) before the vault is asked for card data, so a refused destination
 * never causes a render; the rendered body lives only in this function's memory.
 *
 * Logs carry the PSP host, method, status and timings; never the path, query, header values
 * (they hold PSP credentials) or bodies.
 */
export async function forwardToPsp(deps: ForwardDeps, input: ForwardRequest__Output, ctx: ForwardContext = {}): Promise<ForwardResponse> {
  const started = performance.now();
  const log = deps.logger;
  const logFields: Record<string, unknown> = { requestId: ctx.requestId, merchantId: input.merchantId };
  try {
    const method = parsePspMethod(input.method);
    logFields.method = method;
    const destination = checkDestinationUrl(input.url, parseMode(input.mode));
    logFields.pspHost = destination.logHost;
    assertHostOnAllowlist(destination.hostname, input.allowedHosts ?? []);
    const headers = filterRequestHeaders(input.headers);
    await checkDestinationAddresses(deps.egress, destination);

    const body = input.hasBody
      ? await deps.vault.render(
          {
            merchantId: input.merchantId,
            // As sent, not parseMode's reading: an unknown mode must find no token, not become live.
            mode: input.mode,
            token: input.token,
            template: input.bodyTemplate,
            contentType: findContentType(headers),
          },
          ctx.requestId,
        )
      : undefined;

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
    return { status: res.status, headers: res.headers, body: res.body, pspMs: res.pspMs };
  } catch (err) {
    const code = err instanceof TesseraError ? err.code : 'internal_error';
    const fields = { ...logFields, code, cause: causeCode(err), durationMs: Math.round(performance.now() - started) };
    if (code === 'internal_error') log.error({ ...fields, err }, 'psp exchange failed');
    else log.warn(fields, 'psp exchange failed');
    throw err;
  }
}

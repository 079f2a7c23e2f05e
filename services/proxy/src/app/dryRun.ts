import { TesseraError, type Logger } from '@tessera/common';
import type { DryRunReport, ForwardCall } from '@tessera/protos';
import { parseMode, type DestinationPolicy } from '../domain/destinationPolicy';
import { filterRequestHeaders } from '../domain/headers';
import { maskCredentialHeaders } from '../domain/maskHeaders';
import { parsePspMethod } from '../domain/method';
import { preflightDestination, type PspEgress } from '../egress/pspEgress';
import { renderInputOf, type VaultPort } from './vaultPort';

export interface DryRunDeps {
  policy: DestinationPolicy;
  egress: PspEgress;
  vault: Pick<VaultPort, 'preview'>;
  logger: Logger;
}

/** Destination errors a dry run reports as a verdict rather than failing with. */
const DESTINATION_VERDICTS = new Set(['psp_destination_forbidden', 'psp_unreachable']);

/**
 * Everything forwardToPsp does before sending, and nothing after: the same method, header and
 * destination checks (DNS included), and a masked preview from the vault instead of a render.
 * No connection to the PSP is opened and no clear card data exists in this process.
 *
 * A refused destination is part of the answer (the point of a dry run is to see every problem
 * at once); malformed input (bad method, header, URL) and vault errors such as token_not_found
 * fail the call as they would fail Forward.
 */
export async function dryRunForward(deps: DryRunDeps, input: ForwardCall, ctx: { requestId?: string } = {}): Promise<DryRunReport> {
  const method = parsePspMethod(input.method);
  const headers = filterRequestHeaders(input.headers);
  let destinationError: TesseraError | undefined;
  try {
    const url = deps.policy.checkUrl(input.url, parseMode(input.mode), input.allowedHosts ?? []);
    await preflightDestination(deps.egress, url);
  } catch (err) {
    if (!(err instanceof TesseraError) || !DESTINATION_VERDICTS.has(err.code)) throw err;
    destinationError = err;
  }
  const renderInput = renderInputOf(input, headers);
  const preview = renderInput === undefined ? null : await deps.vault.preview(renderInput, ctx.requestId);
  deps.logger.info(
    { requestId: ctx.requestId, merchantId: input.merchantId, method, destinationAllowed: destinationError === undefined },
    'dry run',
  );
  return {
    method,
    url: input.url,
    headers: maskCredentialHeaders(headers),
    hasBody: input.hasBody,
    preview,
    destinationAllowed: destinationError === undefined,
    destinationErrorCode: destinationError?.code ?? '',
    destinationErrorMessage: destinationError?.message ?? '',
  };
}

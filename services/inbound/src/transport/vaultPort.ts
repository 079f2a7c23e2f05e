import {
  callUnary,
  readinessOverChannel,
  tokenizeRequestToWire,
  VAULT_SERVICE_NAME,
  type TokenRecord__Output,
  type VaultClient,
  type WireTokenizeRequest,
} from '@tessera/protos';
import type { InboundVault } from '../app/ports';

/**
 * The vault as the inbound identity may use it: Tokenize, one call per card (not the batched
 * helper, whose TokenizeBatch this identity may not make), durable and never deduplicated. The
 * vault's caller policy holds this identity to the same; this keeps the code from even asking more.
 */
export function inboundVaultOver(client: VaultClient, timeoutMs: number): InboundVault {
  return {
    tokenize: (request, ctx) =>
      callUnary<WireTokenizeRequest, TokenRecord__Output>(
        client,
        client.tokenize,
        tokenizeRequestToWire({ ...request, provisional: false, dedupe: false }),
        { timeoutMs, requestId: ctx.requestId },
      ),
    ready: readinessOverChannel(client, VAULT_SERVICE_NAME, 'vault'),
    close: () => client.close(),
  };
}

import type { VaultCalls } from '@tessera/protos';
import type { FieldsVault } from '../app/ports';

/**
 * The vault's shared calls (@tessera/protos vaultCalls) narrowed to this service's port: a token
 * made here is always provisional, a CVC always goes with its grant. The vault's caller policy
 * holds this identity to the same two calls; this keeps the code from even asking for more.
 */
export function fieldsVaultOver(calls: VaultCalls): FieldsVault {
  return {
    tokenize: (request, ctx) => calls.tokenize({ ...request, provisional: true }, ctx),
    attachCvv: (request, ctx) => calls.attachCvv(request, ctx),
    ready: (ctx) => calls.ready(ctx),
    close: () => calls.close(),
  };
}

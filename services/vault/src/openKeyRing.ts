import type { Logger } from '@tessera/common';
import type { VaultConfig } from './config';
import { combineKeyRings, type EnvKeyRing, type KeyRing } from './domain/keyRing';
import { Pkcs11KeyRing } from './hsm/pkcs11KeyRing';

export interface OpenedKeyRing {
  ring: KeyRing;
  /** Where the current key lives, and the read-only keys of the other provider (for logs and status). */
  describe: { provider: 'env' | 'pkcs11'; currentKeyId: string; keyIds: readonly string[]; readOnlyKeyIds: readonly string[] };
  /** Logs out of the HSM, if one is open. */
  close(): void;
}

/**
 * The ring the vault and its CLI use. VAULT_KEK_PROVIDER picks whose newest key wraps new data
 * keys; the other provider's keys, when configured, only open records, so `rewrap` moves them
 * (VAULT_KEYS to the HSM, or back). `envFallback` supplies the development key when VAULT_KEYS
 * is unset outside production.
 */
export function openKeyRing(
  config: Pick<VaultConfig, 'VAULT_KEK_PROVIDER' | 'VAULT_KEYS' | 'PKCS11'>,
  envFallback: () => EnvKeyRing,
  logger?: Logger,
): OpenedKeyRing {
  const hsm = config.PKCS11 === undefined ? undefined : Pkcs11KeyRing.open(config.PKCS11, logger?.child({ component: 'hsm' }));
  try {
    const env = config.VAULT_KEYS ?? (config.VAULT_KEK_PROVIDER === 'env' ? envFallback() : undefined);
    const [current, readOnly] = config.VAULT_KEK_PROVIDER === 'pkcs11' ? [hsm, env] : [env, hsm];
    if (current === undefined) throw new Error(`no ${config.VAULT_KEK_PROVIDER} key is configured`);
    const ring = combineKeyRings(current, readOnly);
    return {
      ring,
      describe: {
        provider: config.VAULT_KEK_PROVIDER,
        currentKeyId: ring.currentKeyId,
        keyIds: current.keyIds,
        readOnlyKeyIds: readOnly?.keyIds ?? [],
      },
      close: () => hsm?.close(),
    };
  } catch (err) {
    hsm?.close();
    throw err;
  }
}

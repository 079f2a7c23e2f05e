import { loadOrCreateDevSecret, type Logger } from '@tessera/common';
import type { VaultConfig } from './config';
import { combineKeyRings, generateKeyRingEntry, parseKeyRing, type EnvKeyRing, type KeyRing } from './domain/keyRing';
import { HsmError, Pkcs11KeyRing } from './hsm/pkcs11KeyRing';

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

/**
 * The vault service's ring: openKeyRing with the development key as fallback. A key ring that
 * cannot be used stops the vault (exit 78) with the reason: a CKR_* code, never the PIN.
 */
export function openServiceKeyRing(config: VaultConfig, logger: Logger): OpenedKeyRing {
  try {
    return openKeyRing(config, () => developmentKeyRing(config, logger), logger);
  } catch (err) {
    if (!(err instanceof HsmError)) throw err;
    process.stderr.write(`[vault] the HSM cannot be used: ${err.message}\n`);
    process.exit(78);
  }
}

/** Outside production only (the config schema enforces that): one generated key kept on disk. */
function developmentKeyRing(config: VaultConfig, logger: Logger): EnvKeyRing {
  const { value, created } = loadOrCreateDevSecret(config.TESSERA_STATE_DIR, 'vault-keys', () => generateKeyRingEntry('dev1'));
  const parsed = parseKeyRing(value);
  if (!parsed.ok) {
    process.stderr.write(
      `[vault] the development key file in ${config.TESSERA_STATE_DIR} is invalid:\n${parsed.problems.map((p) => `  - ${p}`).join('\n')}\n`,
    );
    process.exit(78);
  }
  logger.warn(
    { stateDir: config.TESSERA_STATE_DIR, created },
    'VAULT_KEYS is not set: using a DEVELOPMENT key stored on local disk. Never use this outside development; set VAULT_KEYS.',
  );
  return parsed.ring;
}

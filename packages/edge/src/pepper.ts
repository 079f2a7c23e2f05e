import crypto from 'node:crypto';
import { loadOrCreateDevSecret, type Logger } from '@tessera/common';
import type { Pepper } from '@tessera/merchant-data';

export interface ResolvedPepper {
  /** The newest pepper: every new key is hashed with it, and keys found under an older one are moved to it. */
  pepper: string;
  /** The version names of every configured pepper, oldest first (API_KEY_PEPPER alone is `default`). */
  peppers: Pepper[];
  /** The older peppers, newest first: a key not found under `pepper` is looked up under each. */
  previousPeppers: string[];
  source: 'env' | 'dev-file';
}

function resolved(peppers: Pepper[], source: ResolvedPepper['source']): ResolvedPepper {
  const current = peppers[peppers.length - 1];
  if (current === undefined) throw new Error('no API-key pepper is configured');
  return {
    pepper: current.pepper,
    peppers,
    previousPeppers: peppers
      .slice(0, -1)
      .reverse()
      .map((p) => p.pepper),
    source,
  };
}

/** What resolveApiKeyPepper reads: apiKeyPepperEnvShape, NODE_ENV and the service's TESSERA_STATE_DIR. */
export interface PepperConfig {
  API_KEY_PEPPER?: string | undefined;
  API_KEY_PEPPERS?: Pepper[] | undefined;
  NODE_ENV: string;
  TESSERA_STATE_DIR: string;
}

/**
 * The pepper keys every API-key digest: every service that looks keys up (gateway, admin, fields)
 * and the CLIs must agree on it, so all resolve it here. Outside production a missing pepper is
 * generated once into the state dir (each service's own: set API_KEY_PEPPER to share one).
 */
export function resolveApiKeyPepper(config: PepperConfig, logger?: Logger): ResolvedPepper {
  if (config.API_KEY_PEPPERS !== undefined) return resolved(config.API_KEY_PEPPERS, 'env');
  if (config.API_KEY_PEPPER !== undefined) return resolved([{ version: 'default', pepper: config.API_KEY_PEPPER }], 'env');
  if (config.NODE_ENV === 'production') throw new Error('API_KEY_PEPPER is required in production');
  const { value, created } = loadOrCreateDevSecret(config.TESSERA_STATE_DIR, 'api-key-pepper', () =>
    crypto.randomBytes(32).toString('base64url'),
  );
  logger?.warn(
    { stateDir: config.TESSERA_STATE_DIR, created },
    'API_KEY_PEPPER is not set: using a development pepper from the state dir. Set API_KEY_PEPPER in any shared environment.',
  );
  return resolved([{ version: 'default', pepper: value }], 'dev-file');
}

import crypto from 'node:crypto';
import { z } from 'zod';
import { loadOrCreateDevSecret, type Logger } from '@tessera/common';
import { MIN_PEPPER_LENGTH, parseApiKeyPeppers, type Pepper } from './domain/apiKeys';

/**
 * The API-key pepper as every service that hashes or looks up keys configures it (the gateway that
 * authenticates them, the admin service and its CLIs that create them): they must agree on it, so
 * they parse and resolve it here.
 */

/** `VAR=` in a compose file or shell means "not set" for an optional variable. */
const unsetIfEmpty = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema);

/** API_KEY_PEPPER and API_KEY_PEPPERS, for a service's config schema. */
export const apiKeyPepperEnvShape = {
  API_KEY_PEPPER: unsetIfEmpty(z.string().min(MIN_PEPPER_LENGTH, `must be at least ${MIN_PEPPER_LENGTH} characters`).optional()),
  // Several peppers, `version:pepper` newest last: the newest hashes keys, older ones still find theirs (rotation).
  API_KEY_PEPPERS: unsetIfEmpty(
    z
      .string()
      .optional()
      .transform((text, ctx): Pepper[] | undefined => {
        if (text === undefined) return undefined;
        const parsed = parseApiKeyPeppers(text);
        if (parsed.ok) return parsed.peppers;
        for (const problem of parsed.problems) ctx.addIssue({ code: 'custom', message: problem });
        return z.NEVER;
      }),
  ),
};

export interface ApiKeyPepperConfig {
  API_KEY_PEPPER?: string | undefined;
  API_KEY_PEPPERS?: Pepper[] | undefined;
  NODE_ENV: string;
  /** Where a development pepper is generated and kept (the service's own state directory). */
  TESSERA_STATE_DIR: string;
}

/** The schema's refinement: one of the two variables at most, and one of them in production. */
export function checkApiKeyPepperEnv(cfg: ApiKeyPepperConfig, ctx: z.RefinementCtx): void {
  if (cfg.API_KEY_PEPPER !== undefined && cfg.API_KEY_PEPPERS !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['API_KEY_PEPPERS'],
      message: 'set API_KEY_PEPPER or API_KEY_PEPPERS, not both (list the old pepper in API_KEY_PEPPERS)',
    });
  }
  if (cfg.NODE_ENV === 'production' && cfg.API_KEY_PEPPER === undefined && cfg.API_KEY_PEPPERS === undefined) {
    ctx.addIssue({ code: 'custom', path: ['API_KEY_PEPPER'], message: 'is required in production (or API_KEY_PEPPERS)' });
  }
}

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

/**
 * The pepper keys every API-key digest: the gateway, the admin service and the CLI must agree on
 * it, so all resolve it here. Outside production a missing pepper is generated once into the state dir.
 */
export function resolveApiKeyPepper(config: ApiKeyPepperConfig, logger?: Logger): ResolvedPepper {
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

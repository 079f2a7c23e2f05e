import { z } from 'zod';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parses the environment once at start-up, collecting every bad variable in one message. */
export function parseConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.infer<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  throw new ConfigError(result.error.issues.map((issue) => `${issue.path.join('.') || '(env)'}: ${issue.message}`));
}

/** For a service's main(): print every problem and exit with EX_CONFIG. */
export function loadConfigOrExit<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv, service: string): z.infer<S> {
  try {
    return parseConfig(schema, env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`[${service}] ${err.message}\n`);
      process.exit(78);
    }
    throw err;
  }
}

/** The entries of a comma-separated setting, trimmed, empty ones dropped. */
export function csvEntries(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** One entry of an `id:value,id:value` setting (VAULT_KEYS, API_KEY_PEPPERS, PKCS11_KEYS). */
export interface KeyedEntry {
  /** `entry N`, 1-based: problems name an entry by position, never by its text (it may be a secret). */
  where: string;
  /** Before the first colon; undefined when the entry has none. */
  id: string | undefined;
  /** After the first colon; the whole entry when it has none. */
  value: string;
}

/** The entries of an `id:value,id:value` setting, newest last as every such setting lists them. */
export function keyedEntries(text: string): KeyedEntry[] {
  return csvEntries(text).map((entry, index) => {
    const colon = entry.indexOf(':');
    return { where: `entry ${index + 1}`, id: colon < 0 ? undefined : entry.slice(0, colon), value: entry.slice(colon + 1) };
  });
}

/** Reusable pieces for env schemas: env values are strings, these coerce and validate them. */
export const env = {
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  positiveInt: (fallback: number) => z.coerce.number().int().positive().default(fallback),
  nonNegativeInt: (fallback: number) => z.coerce.number().int().min(0).default(fallback),
  bool: (fallback: boolean) =>
    z
      .enum(['true', 'false', '1', '0', 'yes', 'no'])
      .default(fallback ? 'true' : 'false')
      .transform((v) => v === 'true' || v === '1' || v === 'yes'),
  csv: () => z.string().default('').transform(csvEntries),
  hostPort: (fallback: string) =>
    z
      .string()
      .default(fallback)
      .refine((v) => /^[^\s:]+:\d{1,5}$|^\[[0-9a-fA-F:]+\]:\d{1,5}$/.test(v), 'must be host:port'),
  /**
   * Only an explicit `development` or `test` relaxes the production rules (real secrets, mTLS, a
   * shared Redis). Unset means production: a service started by hand or by a recipe that forgot the
   * variable must not serve card data in plaintext. `npm start`, the test harness and the bench set it.
   */
  nodeEnv: () => z.enum(['development', 'production', 'test']).default('production'),
  logLevel: () => z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  redisUrl: () =>
    z
      .string()
      .url()
      .refine((v) => /^rediss?:\/\//.test(v), 'must be a redis:// or rediss:// URL')
      .optional(),
};

import { z } from 'zod';
import { env, parseCidr, redisTlsCaFileEnv } from '@tessera/common';
import { MIN_PEPPER_LENGTH, parseApiKeyPeppers, type Pepper } from '@tessera/merchant-data';

// Config pieces the HTTP services' schemas share (each service still parses its own env once, with zod).

/** `VAR=` in a compose file or shell means "not set" for an optional variable. */
export const unsetIfEmpty = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema);

/** A public origin as browsers write it: scheme, host, optional port; no path, query or credentials. */
export const publicOrigin = z
  .string()
  .refine((v) => {
    if (!URL.canParse(v)) return false;
    const url = new URL(v);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === v.replace(/\/$/, '');
  }, 'must be an origin: http(s)://host[:port], nothing after it')
  .transform((v) => new URL(v).origin);

/** REDIS_CLUSTER_NODES: CSV host:port of the Cluster's seed nodes (REDIS_URL then gives credentials and TLS). */
export const redisClusterNodesEnv = env.csv().superRefine((list, ctx) => {
  for (const entry of list) {
    if (!/^[^\s:]+:\d{1,5}$/.test(entry)) ctx.addIssue({ code: 'custom', message: `"${entry}" is not host:port` });
  }
});

/** The Redis a service keeps its records in; each schema says whether REDIS_URL is required. */
export const redisEnvShape = {
  REDIS_URL: unsetIfEmpty(env.redisUrl()),
  // CSV host:port: the store is a Redis Cluster seeded by these nodes; REDIS_URL is still
  // required and gives the credentials and TLS (rediss://) used for every node.
  REDIS_CLUSTER_NODES: redisClusterNodesEnv,
  REDIS_TLS_CA_FILE: redisTlsCaFileEnv,
  // Bounds every Redis command so a stuck Redis turns into a 503 instead of a hanging request.
  REDIS_COMMAND_TIMEOUT_MS: env.positiveInt(1000),
};

/** TRUSTED_PROXIES: CSV of the load balancers (IPs or CIDRs) whose X-Forwarded-For names the client. */
export const trustedProxiesEnv = env.csv().superRefine((list, ctx) => {
  for (const entry of list) {
    if (parseCidr(entry) === undefined) ctx.addIssue({ code: 'custom', message: `"${entry}" is not an IP address or CIDR` });
  }
});

/** API_KEY_PEPPER or API_KEY_PEPPERS, in the config schema of every service that looks API keys up. */
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

/** For a superRefine: one of the two, never both; one is required in production. */
export function checkPepperEnv(
  cfg: { API_KEY_PEPPER?: string | undefined; API_KEY_PEPPERS?: Pepper[] | undefined; NODE_ENV: string },
  ctx: z.RefinementCtx,
): void {
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

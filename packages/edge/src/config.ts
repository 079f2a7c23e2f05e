import { z } from 'zod';
import { env, parseCidr, redisTlsCaFileEnv } from '@tessera/common';

// Config pieces the HTTP services' schemas share (each service still parses its own env once, with zod).
// The API-key pepper's are @tessera/merchant-data's (apiKeyPepper.ts): the CLIs need them too.

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

/** The Redis every HTTP service keeps its state in, for its config schema (checkRedisUrlEnv in its refinement). */
export const httpServiceRedisEnvShape = {
  REDIS_URL: unsetIfEmpty(env.redisUrl()),
  // CSV host:port: the store is a Redis Cluster seeded by these nodes; REDIS_URL is still
  // required and gives the credentials and TLS (rediss://) used for every node.
  REDIS_CLUSTER_NODES: env.csv().superRefine((list, ctx) => {
    for (const entry of list) {
      if (!/^[^\s:]+:\d{1,5}$/.test(entry)) ctx.addIssue({ code: 'custom', message: `"${entry}" is not host:port` });
    }
  }),
  REDIS_TLS_CA_FILE: redisTlsCaFileEnv,
  // Bounds every Redis command so a stuck Redis turns into a 503 instead of a hanging request.
  REDIS_COMMAND_TIMEOUT_MS: env.positiveInt(1000),
};

/** TRUSTED_PROXIES: the load balancers whose X-Forwarded-For is believed. */
export const trustedProxiesEnv = env.csv().superRefine((list, ctx) => {
  for (const entry of list) {
    if (parseCidr(entry) === undefined) ctx.addIssue({ code: 'custom', message: `"${entry}" is not an IP address or CIDR` });
  }
});

/**
 * REDIS_URL is required in every NODE_ENV (with a Cluster too: it gives the credentials): state held
 * per process would differ between replicas and vanish on restart. `keeps` says what the service
 * keeps there, for the message.
 */
export function checkRedisUrlEnv(
  cfg: { REDIS_URL?: string | undefined; REDIS_CLUSTER_NODES: string[] },
  ctx: z.RefinementCtx,
  keeps: string,
): void {
  if (cfg.REDIS_CLUSTER_NODES.length > 0 && cfg.REDIS_URL === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['REDIS_CLUSTER_NODES'],
      message: 'needs REDIS_URL as well (any node; its credentials and TLS apply to every node)',
    });
  } else if (cfg.REDIS_URL === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['REDIS_URL'],
      message: `is required: ${keeps} (\`npm start\` runs a private redis-server and sets it)`,
    });
  }
}

import fs from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { z } from 'zod';

/**
 * REDIS_TLS_CA_FILE: the CA that signed Redis's server certificate (PEM), for a `rediss://`
 * REDIS_URL; unset, rediss:// trusts the system's CAs (a managed Redis with a public certificate).
 */
export const redisTlsCaFileEnv = z.preprocess((v) => (v === '' ? undefined : v), z.string().min(1).optional());

interface RedisTlsEnv {
  REDIS_URL?: string | undefined;
  REDIS_TLS_CA_FILE?: string | undefined;
}

/** For a superRefine: a CA file needs a rediss:// URL (TLS is chosen by the URL) and must hold a certificate. */
export function checkRedisTlsEnv(config: RedisTlsEnv, ctx: z.RefinementCtx): void {
  const caFile = config.REDIS_TLS_CA_FILE;
  if (typeof caFile !== 'string') return;
  if (typeof config.REDIS_URL !== 'string' || !config.REDIS_URL.startsWith('rediss://')) {
    ctx.addIssue({
      code: 'custom',
      path: ['REDIS_TLS_CA_FILE'],
      message: 'needs a rediss:// REDIS_URL (TLS to Redis is chosen by the URL)',
    });
    return;
  }
  let text: string;
  try {
    text = fs.readFileSync(caFile, 'utf8');
  } catch (err) {
    ctx.addIssue({
      code: 'custom',
      path: ['REDIS_TLS_CA_FILE'],
      message: `cannot read ${caFile}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
    });
    return;
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) {
    ctx.addIssue({ code: 'custom', path: ['REDIS_TLS_CA_FILE'], message: `${caFile} holds no PEM certificate` });
  }
}

export interface RedisConnectionOptions {
  username?: string;
  password?: string;
  tls?: ConnectionOptions;
}

/**
 * Credentials and TLS of a `redis://user:pass@host` or `rediss://` URL as client options, for the
 * nodes of a Redis Cluster (which are given as host:port, not as URLs) and, with the CA, for one
 * Redis. The password goes to the client only: never log the URL or these options.
 */
export function redisConnectionOptions(url: string | undefined, caFile: string | undefined): RedisConnectionOptions {
  if (url === undefined) return {};
  const parsed = new URL(url);
  const options: RedisConnectionOptions = {};
  if (parsed.username) options.username = decodeURIComponent(parsed.username);
  if (parsed.password) options.password = decodeURIComponent(parsed.password);
  if (parsed.protocol === 'rediss:') options.tls = caFile === undefined ? {} : { ca: fs.readFileSync(caFile) };
  return options;
}

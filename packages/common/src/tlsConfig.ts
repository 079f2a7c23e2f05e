import { z } from 'zod';

/**
 * The mTLS settings every service shares. All three files or none; NODE_ENV=production requires
 * them (card data and API-key decisions cross these links). TLS_PEER_* are the SAN DNS names the
 * other services' certificates carry.
 */
export const tlsEnvShape = {
  TLS_CA_FILE: z.string().min(1).optional(),
  TLS_CERT_FILE: z.string().min(1).optional(),
  TLS_KEY_FILE: z.string().min(1).optional(),
  TLS_PEER_GATEWAY: z.string().min(1).default('gateway'),
  TLS_PEER_VAULT: z.string().min(1).default('vault'),
  TLS_PEER_PROXY: z.string().min(1).default('proxy'),
};

interface TlsEnv {
  NODE_ENV: string;
  TLS_CA_FILE?: string | undefined;
  TLS_CERT_FILE?: string | undefined;
  TLS_KEY_FILE?: string | undefined;
}

/** For a superRefine: reports half-configured TLS, and missing TLS in production. */
export function checkTlsEnv(config: TlsEnv, ctx: z.RefinementCtx): void {
  const names = ['TLS_CA_FILE', 'TLS_CERT_FILE', 'TLS_KEY_FILE'] as const;
  const set = names.filter((n) => config[n] !== undefined);
  if (set.length > 0 && set.length < names.length) {
    for (const n of names) {
      if (config[n] === undefined) ctx.addIssue({ code: 'custom', path: [n], message: `is required when ${set.join(', ')} is set` });
    }
  }
  if (set.length === 0 && config.NODE_ENV === 'production') {
    ctx.addIssue({
      code: 'custom',
      path: ['TLS_CA_FILE'],
      message: 'TLS_CA_FILE, TLS_CERT_FILE and TLS_KEY_FILE are required when NODE_ENV=production (mTLS between services)',
    });
  }
}

export function tlsFilesOf(config: TlsEnv): { caFile: string; certFile: string; keyFile: string } | undefined {
  if (config.TLS_CA_FILE === undefined || config.TLS_CERT_FILE === undefined || config.TLS_KEY_FILE === undefined) return undefined;
  return { caFile: config.TLS_CA_FILE, certFile: config.TLS_CERT_FILE, keyFile: config.TLS_KEY_FILE };
}

import { z } from 'zod';
import { checkTlsEnv, env, tlsEnvShape } from '@tessera/common';
import { parseCidrList, type Cidr } from './domain/addressPolicy';

/**
 * PSP_ALLOWED_CIDRS opens otherwise-forbidden ranges (tests and the local sandbox PSP use
 * 127.0.0.1/32). Empty by default: production reaches only global unicast addresses.
 */
const cidrList = env.csv().transform((entries, ctx): Cidr[] => {
  try {
    return parseCidrList(entries);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return z.NEVER;
  }
});

export const configSchema = z
  .object({
    PROXY_ADDR: env.hostPort('127.0.0.1:50052'),
    VAULT_ADDR: env.hostPort('127.0.0.1:50051'),
    /** Deadline of each vault call (Render, Ready). */
    VAULT_TIMEOUT_MS: env.positiveInt(2000),
    /** Total time for one PSP exchange, body included. */
    PSP_TIMEOUT_MS: env.positiveInt(30000),
    PSP_CONNECT_TIMEOUT_MS: env.positiveInt(5000),
    PSP_MAX_RESPONSE_BYTES: env.positiveInt(10 * 1024 * 1024),
    PSP_ALLOWED_CIDRS: cidrList,
    NODE_ENV: env.nodeEnv(),
    LOG_LEVEL: env.logLevel(),
    ...tlsEnvShape,
  })
  // Runs even when other variables are bad, so one start-up lists every problem.
  .superRefine((config, ctx) => checkTlsEnv(config, ctx), { when: () => true });

export type ProxyConfig = z.infer<typeof configSchema>;

import path from 'node:path';
import { z } from 'zod';
import { checkTlsEnv, env, tlsEnvShape } from '@tessera/common';
import { parseKeyRing, type KeyRing } from './domain/keyRing';

const vaultKeys = z
  .string()
  .optional()
  .transform((text, ctx): KeyRing | undefined => {
    if (text === undefined || text.trim() === '') return undefined;
    const parsed = parseKeyRing(text);
    if (parsed.ok) return parsed.ring;
    for (const problem of parsed.problems) ctx.addIssue({ code: 'custom', message: problem });
    return z.NEVER;
  });

export const configSchema = z
  .object({
    VAULT_ADDR: env.hostPort('127.0.0.1:50051'),
    REDIS_URL: env.redisUrl(),
    VAULT_KEYS: vaultKeys,
    CVV_TTL_SECONDS: env.positiveInt(3600),
    CARD_GRACE_DAYS: env.nonNegativeInt(30),
    REDIS_COMMAND_TIMEOUT_MS: env.positiveInt(2000),
    TESSERA_STATE_DIR: z
      .string()
      .default('.tessera')
      .transform((dir) => path.resolve(dir)),
    NODE_ENV: env.nodeEnv(),
    LOG_LEVEL: env.logLevel(),
    ...tlsEnvShape,
  })
  // Runs even when other variables are bad, so one start-up lists every problem.
  .superRefine(
    (config, ctx) => {
      checkTlsEnv(config, ctx);
      if (config.NODE_ENV !== 'production') return;
      if (config.VAULT_KEYS === undefined) {
        ctx.addIssue({ code: 'custom', path: ['VAULT_KEYS'], message: 'is required when NODE_ENV=production' });
      }
      if (config.REDIS_URL === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['REDIS_URL'],
          message: 'is required when NODE_ENV=production (the in-memory store loses tokens)',
        });
      }
    },
    { when: () => true },
  );

export type VaultConfig = z.infer<typeof configSchema>;

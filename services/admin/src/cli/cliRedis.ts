import { EXIT_USAGE, parseCliConfig, type CliIo } from '@tessera/common';
import { createRedisClient } from '@tessera/common/redis';
import { parseAdminConfig, type AdminConfig } from '../config';

/** An expected failure of a CLI command (unknown id, Redis down): printed as is, exit code 1. */
export class CommandError extends Error {}

type RedisClient = ReturnType<typeof createRedisClient>;

/**
 * The admin service's configuration and a not-yet-connected client of the shared Redis, as the keys
 * and admin CLIs need them; or the exit code when either is missing. `withoutRedis` tells the
 * operator where to point REDIS_URL.
 */
export function openCliRedis(
  environment: NodeJS.ProcessEnv,
  io: CliIo,
  withoutRedis: string,
): { ok: true; config: AdminConfig; redis: RedisClient } | { ok: false; exitCode: number } {
  // Before the configuration, which refuses it too: the CLI's own words say where to point it.
  if (!environment.REDIS_URL) {
    io.err(`REDIS_URL is not set. ${withoutRedis}`);
    return { ok: false, exitCode: EXIT_USAGE };
  }
  const parsed = parseCliConfig(() => parseAdminConfig(environment), io);
  if (!parsed.ok) return parsed;
  const config = parsed.config;
  const redis = createRedisClient(config.REDIS_URL, {
    commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
    clusterNodes: config.REDIS_CLUSTER_NODES,
    profile: 'cli',
    tlsCaFile: config.REDIS_TLS_CA_FILE,
  });
  redis.on('error', () => {
    // Reported once, by the caller, through the failing command.
  });
  return { ok: true, config, redis };
}

/**
 * Connects. The Redis layout is the gateway's to bring up to date (its layoutMigration.ts, at
 * start): a store still in the layout before merchant slots shows no keys here until it has.
 */
export async function connectCliRedis(redis: RedisClient): Promise<void> {
  await redis.connect().catch(() => {
    throw new CommandError('cannot connect to Redis at REDIS_URL');
  });
}

/** Prints a failed command's reason (a CommandError's own words, anything else prefixed) and returns exit code 1. */
export function reportCommandFailure(err: unknown, io: CliIo): number {
  io.err(err instanceof CommandError ? err.message : `failed: ${err instanceof Error ? err.message : String(err)}`);
  return 1;
}

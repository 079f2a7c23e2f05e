import os from 'node:os';
import { TesseraError, UsageError, type CliIo } from '@tessera/common';
import type { Caller } from '../app/caller';
import type { AdminConfig } from '../config';
import { isValidMerchantId, resolveApiKeyPepper } from '@tessera/merchant-data';
import { CommandError, openCliRedis, reportCommandFailure } from './cliRedis';

/**
 * What every admin CLI command shares: who it acts as, and a client of the shared Redis that is
 * opened, handed to the command and closed again whatever happens.
 */

/** CLI changes go to the dashboard's audit log, attributed to the OS user who ran the command. */
function cliActor(): { id: string; email: string } {
  let user = 'unknown';
  try {
    user = os.userInfo().username;
  } catch {
    // No passwd entry (some containers): keep "unknown".
  }
  return { id: 'cli', email: `cli:${user}` };
}

/** The CLI runs with the Redis credentials of the deployment: it may manage every merchant. */
export function cliCaller(): Caller {
  return { actor: cliActor(), ip: undefined, merchantId: null };
}

/** A use case's refusal (bad input, out of reach) as the CLI says it: exit 1 with its reason. */
export async function asCommand<T>(run: () => Promise<T>, name?: string): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof TesseraError && err.status < 500)
      throw new CommandError(name === undefined ? err.message : `${name}: ${err.message}`);
    throw err;
  }
}

type Opened = Extract<ReturnType<typeof openCliRedis>, { ok: true }>;

/**
 * Runs `command` with the configuration and a not-yet-connected Redis client (a command may read
 * standard input before it connects); 0 when it succeeded, else the reported failure's exit code.
 */
export async function runWithCliRedis(
  environment: NodeJS.ProcessEnv,
  io: CliIo,
  withoutRedis: string,
  command: (opened: { config: AdminConfig; redis: Opened['redis'] }) => Promise<void>,
): Promise<number> {
  const opened = openCliRedis(environment, io, withoutRedis);
  if (!opened.ok) return opened.exitCode;
  const { redis } = opened;
  try {
    await command(opened);
    return 0;
  } catch (err) {
    return reportCommandFailure(err, io);
  } finally {
    if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
    else redis.disconnect();
  }
}

/** `--merchant <id>`, checked the same way by every command that takes it; `command` names the command when it is missing. */
export function merchantFlag(merchant: string | undefined, command: string): string {
  if (merchant === undefined) throw new UsageError(`${command} needs --merchant <id>`);
  if (!isValidMerchantId(merchant)) throw new UsageError('--merchant must be 1-64 letters, digits, "_", "." or "-"');
  return merchant;
}

/**
 * The API-key pepper as a CLI uses it (keys, webhook secrets): the deployment's, or the development
 * file's with a warning, since the gateway must then use that same file.
 */
export function cliPepper(config: AdminConfig, io: CliIo): ReturnType<typeof resolveApiKeyPepper> {
  const resolved = resolveApiKeyPepper(config);
  if (resolved.source === 'dev-file') {
    io.err(
      `warning: API_KEY_PEPPER is not set; using the development pepper in ${config.TESSERA_STATE_DIR} (the gateway must use the same one).`,
    );
  }
  return resolved;
}

/**
 * Manages dashboard operators in the shared Redis store; reached as `npm run keys -- admin ...`.
 * Passwords are read from standard input only, never from arguments (shell history, `ps`).
 * Exit codes: 0 done, 1 failed, 2 usage, 78 bad configuration.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { reportUsageError, UsageError, type CliIo } from '@tessera/common';
import { isValidMerchantId } from '../domain/apiKeys';
import { buildAuditRecord } from '../domain/admin/audit';
import {
  isValidEmail,
  loginAccountBucket,
  newOperatorRecord,
  normalizeEmail,
  operatorView,
  type OperatorRecord,
} from '../domain/admin/operators';
import { hashPassword, passwordProblem } from '../domain/admin/passwords';
import { RedisAuditLog, RedisLoginThrottle, RedisOperatorStore } from '../store/redisAdminStores';
import { CommandError, connectCliRedis, openCliRedis, reportCommandFailure } from './cliRedis';

export const ADMIN_USAGE = `Usage: npm run keys -- admin <command> [options]

Dashboard operators (they log in at /dashboard):
  create --email <email> (--merchant <id> | --global) --password-stdin
      --merchant: the operator manages that merchant's keys only; --global: every merchant.
  set-password --email <email> --password-stdin
  disable --email <email>        Refuses the operator's logins and ends their sessions.
  enable --email <email>
  unlock --email <email>         Lifts the sign-in lock of the account (not of blocked sources). Audited.
  mfa reset --email <email>      Removes the operator's second factor and recovery codes (a lost
      authenticator) and ends their sessions; they set it up again at their next sign-in. Audited.
  list [--json]

The password (at least 12 characters) is read from standard input, e.g.
  printf '%s' "$PASSWORD" | npm run keys -- admin create --email ops@acme.test --merchant acme --password-stdin

Environment: REDIS_URL (required), TESSERA_STATE_DIR.`;

export interface AdminIo extends CliIo {
  readStdin: () => Promise<string>;
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      email: { type: 'string' },
      merchant: { type: 'string' },
      global: { type: 'boolean', default: false },
      'password-stdin': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
}

type Parsed = ReturnType<typeof parse>;

function emailOf(args: Parsed): string {
  const email = args.values.email;
  if (email === undefined) throw new UsageError('--email <email> is required');
  const normalized = normalizeEmail(email);
  if (!isValidEmail(normalized)) throw new UsageError(`--email "${email}" is not an email address`);
  return normalized;
}

async function passwordFrom(io: AdminIo): Promise<string> {
  const password = (await io.readStdin()).replace(/\r?\n$/, '');
  const problem = passwordProblem(password);
  if (problem !== undefined) throw new CommandError(`the password ${problem}`);
  return password;
}

function describe(op: OperatorRecord): string {
  const scope = op.merchantId === null ? 'all merchants' : `merchant ${op.merchantId}`;
  const mfa = op.mfa ? 'two-factor on' : 'two-factor off';
  return `${op.email} (${op.id}, ${scope}, ${mfa}${op.disabledAt ? `, disabled ${op.disabledAt}` : ''})`;
}

/** CLI changes are audited as the OS user who ran the command (like keys.ts). */
function cliActor(): { id: string; email: string } {
  let user = 'unknown';
  try {
    user = os.userInfo().username;
  } catch {
    // No passwd entry (some containers): keep "unknown".
  }
  return { id: 'cli', email: `cli:${user}` };
}

export async function runAdminCli(argv: string[], environment: NodeJS.ProcessEnv, io: AdminIo): Promise<number> {
  let args: Parsed;
  try {
    args = parse(argv);
  } catch (err) {
    io.err(`${err instanceof Error ? err.message : String(err)}\n\n${ADMIN_USAGE}`);
    return 2;
  }
  const command = args.positionals[0];
  if (command === undefined || command === 'help') {
    (command === 'help' ? io.out : io.err)(ADMIN_USAGE);
    return command === 'help' ? 0 : 2;
  }
  const mfaReset = command === 'mfa' && args.positionals[1] === 'reset' && args.positionals.length === 2;
  if ((!['create', 'set-password', 'disable', 'enable', 'unlock', 'list'].includes(command) || args.positionals.length > 1) && !mfaReset) {
    io.err(`Unknown or malformed command "${args.positionals.join(' ')}".\n\n${ADMIN_USAGE}`);
    return 2;
  }
  let email: string | undefined;
  try {
    if (command !== 'list') email = emailOf(args);
    if ((command === 'create' || command === 'set-password') && !args.values['password-stdin']) {
      throw new UsageError('--password-stdin is required: pipe the password on standard input');
    }
    if (command === 'create') {
      const { merchant, global } = args.values;
      if ((merchant === undefined) === !global) throw new UsageError('create needs exactly one of --merchant <id> or --global');
      if (merchant !== undefined && !isValidMerchantId(merchant))
        throw new UsageError('--merchant must be 1-64 letters, digits, "_", "." or "-"');
    }
  } catch (err) {
    return reportUsageError(err, ADMIN_USAGE, io);
  }

  const opened = openCliRedis(
    environment,
    io,
    'Without Redis the gateway keeps operators in memory inside its own process, where this CLI ' +
      'cannot reach them (use TESSERA_DEV_ADMIN_PASSWORD for local development).',
  );
  if (!opened.ok) return opened.exitCode;
  const { redis } = opened;
  const store = new RedisOperatorStore(redis);
  try {
    if (command === 'create' || command === 'set-password') {
      const password = await passwordFrom(io);
      await connectCliRedis(redis);
      const passwordHash = await hashPassword(password);
      if (command === 'create') {
        const op = newOperatorRecord({ email: email ?? '', passwordHash, merchantId: args.values.merchant ?? null, now: new Date() });
        if (!(await store.create(op))) throw new CommandError(`an operator with email ${op.email} already exists`);
        io.out(`Created operator ${describe(op)}.`);
      } else {
        const op = await store.findByEmail(email ?? '');
        if (!op) throw new CommandError(`no operator with email ${email}`);
        // A new password ends every session of the operator (PCI DSS 8.2.x: credentials changed).
        await store.update(op.id, { passwordHash, credentialsChanged: true });
        io.out(`Changed the password of ${describe(op)}; their dashboard sessions have ended.`);
      }
      return 0;
    }
    await connectCliRedis(redis);
    if (command === 'list') {
      const ops = await store.list();
      if (args.values.json)
        io.out(JSON.stringify(ops.map((op) => ({ ...operatorView(op), createdAt: op.createdAt, disabledAt: op.disabledAt }))));
      else if (ops.length === 0) io.out('No operators.');
      else for (const op of ops) io.out(describe(op));
      return 0;
    }
    const op = await store.findByEmail(email ?? '');
    if (!op) throw new CommandError(`no operator with email ${email}`);
    if (command === 'unlock') {
      const bucket = `acct:${loginAccountBucket(op.email)}`;
      const throttle = new RedisLoginThrottle(redis);
      const lockedMs = await throttle.lockRemainingMs(bucket);
      await throttle.unlock(bucket);
      await throttle.reset(bucket);
      await new RedisAuditLog(redis, opened.config.ADMIN_AUDIT_MAX_ENTRIES).append(
        buildAuditRecord({
          action: 'login.unlocked',
          actor: cliActor(),
          ip: undefined,
          merchantId: op.merchantId,
          details: { operator: op.email, wasLocked: lockedMs > 0 },
          now: new Date(),
        }),
      );
      io.out(`${lockedMs > 0 ? 'Unlocked' : 'No lock on'} ${describe(op)}.`);
      return 0;
    }
    if (mfaReset) {
      const updated = await store.update(op.id, { mfa: null, mfaPending: null, credentialsChanged: true });
      const config = opened.config;
      await new RedisAuditLog(redis, config.ADMIN_AUDIT_MAX_ENTRIES).append(
        buildAuditRecord({
          action: 'mfa.reset',
          actor: cliActor(),
          ip: undefined,
          merchantId: op.merchantId,
          details: { operator: op.email, hadMfa: op.mfa !== undefined },
          now: new Date(),
        }),
      );
      io.out(
        `Reset the second factor of ${describe(updated ?? op)}; their sessions have ended and they set it up again at their next sign-in.`,
      );
      return 0;
    }
    const updated = await store.update(op.id, { disabledAt: command === 'disable' ? new Date().toISOString() : null });
    io.out(`${command === 'disable' ? 'Disabled' : 'Enabled'} ${describe(updated ?? op)}.`);
    return 0;
  } catch (err) {
    return reportCommandFailure(err, io);
  } finally {
    if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
    else redis.disconnect();
  }
}

export async function readAllStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('Password (input is shown; prefer a pipe), then Enter and Ctrl+D: ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

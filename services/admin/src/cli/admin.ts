/**
 * Manages dashboard operators in the shared Redis store; reached as `npm run keys -- admin ...`.
 * Passwords are read from standard input only, never from arguments (shell history, `ps`).
 * Exit codes: 0 done, 1 failed, 2 usage, 78 bad configuration.
 */
import { RedisAuditLog } from '@tessera/merchant-data';
import { parseCommandLine, reportUsageError, UsageError, type CliIo } from '@tessera/common';
import {
  createOperator,
  listOperators,
  resetOperatorMfa,
  setOperatorDisabled,
  setOperatorPassword,
  unlockOperator,
} from '../app/operators';
import { isValidEmail, normalizeEmail, operatorView, type OperatorRecord } from '../domain/operators';
import { RedisLoginThrottle, RedisOperatorStore } from '../store/redisAdminStores';
import { asCommand, cliCaller, merchantFlag, runWithCliRedis } from './cliCommand';
import { CommandError, connectCliRedis } from './cliRedis';

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

Environment: as npm run keys (beside npm start none: .tessera/admin/stack.json).`;

export interface AdminIo extends CliIo {
  readStdin: () => Promise<string>;
}

const OPTIONS = {
  email: { type: 'string' },
  merchant: { type: 'string' },
  global: { type: 'boolean', default: false },
  'password-stdin': { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
} as const;

type Parsed = Extract<ReturnType<typeof parseCommandLine<typeof OPTIONS>>, { ok: true }>['args'];

function emailOf(args: Parsed): string {
  const email = args.values.email;
  if (email === undefined) throw new UsageError('--email <email> is required');
  const normalized = normalizeEmail(email);
  if (!isValidEmail(normalized)) throw new UsageError(`--email "${email}" is not an email address`);
  return normalized;
}

function describe(op: OperatorRecord): string {
  const scope = op.merchantId === null ? 'all merchants' : `merchant ${op.merchantId}`;
  const mfa = op.mfa ? 'two-factor on' : 'two-factor off';
  return `${op.email} (${op.id}, ${scope}, ${mfa}${op.disabledAt ? `, disabled ${op.disabledAt}` : ''})`;
}

export async function runAdminCli(argv: string[], environment: NodeJS.ProcessEnv, io: AdminIo): Promise<number> {
  const parsed = parseCommandLine(argv, OPTIONS, ADMIN_USAGE, io);
  if (!parsed.ok) return parsed.exitCode;
  const args = parsed.args;
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
      if (merchant !== undefined) merchantFlag(merchant, 'create');
    }
  } catch (err) {
    return reportUsageError(err, ADMIN_USAGE, io);
  }

  return runWithCliRedis(
    environment,
    io,
    "Operators live in the gateway's Redis: point REDIS_URL at the one the gateway uses " +
      '(for local development, TESSERA_DEV_ADMIN_PASSWORD registers an operator when the admin service starts).',
    async ({ config, redis }) => {
      const deps = {
        operators: new RedisOperatorStore(redis),
        audit: new RedisAuditLog(redis, config.ADMIN_AUDIT_MAX_ENTRIES),
        now: () => new Date(),
      };
      const address = email ?? '';
      const found = <T>(result: T | undefined): T => {
        if (result === undefined) throw new CommandError(`no operator with email ${email}`);
        return result;
      };
      // The password is read before connecting: a prompt must not wait on Redis.
      const password = command === 'create' || command === 'set-password' ? await io.readStdin() : '';
      await connectCliRedis(redis);
      if (command === 'create') {
        const merchantId = args.values.merchant ?? null;
        const created = await asCommand(() => createOperator(deps, { email: address, password: withoutNewline(password), merchantId }));
        if (!created.created) throw new CommandError(`an operator with email ${created.email} already exists`);
        io.out(`Created operator ${describe(created.operator)}.`);
      } else if (command === 'set-password') {
        const op = found(await asCommand(() => setOperatorPassword(deps, address, withoutNewline(password))));
        io.out(`Changed the password of ${describe(op)}; their dashboard sessions have ended.`);
      } else if (command === 'list') {
        const ops = await listOperators(deps);
        if (args.values.json)
          io.out(JSON.stringify(ops.map((op) => ({ ...operatorView(op), createdAt: op.createdAt, disabledAt: op.disabledAt }))));
        else if (ops.length === 0) io.out('No operators.');
        else for (const op of ops) io.out(describe(op));
      } else if (command === 'unlock') {
        const throttle = new RedisLoginThrottle(redis);
        const { operator, wasLocked } = found(await unlockOperator({ ...deps, throttle }, cliCaller(), address));
        io.out(`${wasLocked ? 'Unlocked' : 'No lock on'} ${describe(operator)}.`);
      } else if (mfaReset) {
        const op = found(await resetOperatorMfa(deps, cliCaller(), address));
        io.out(`Reset the second factor of ${describe(op)}; their sessions have ended and they set it up again at their next sign-in.`);
      } else {
        const op = found(await setOperatorDisabled(deps, address, command === 'disable'));
        io.out(`${command === 'disable' ? 'Disabled' : 'Enabled'} ${describe(op)}.`);
      }
    },
  );
}

/** A password piped with `echo` ends in a newline that is not part of it. */
function withoutNewline(input: string): string {
  return input.replace(/\r?\n$/, '');
}

export async function readAllStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('Password (input is shown; prefer a pipe), then Enter and Ctrl+D: ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

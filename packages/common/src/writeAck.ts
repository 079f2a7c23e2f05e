import { z } from 'zod';

/**
 * How far a write must have travelled before it is relied on: a card-store write before the vault
 * reports the token as created (VAULT_WRITE_ACK; a 201 promises the merchant the token exists, this
 * says what "exists" means), an idempotency claim before the gateway acts on it and its stored
 * answer (IDEMPOTENCY_WRITE_ACK).
 *
 * - `none`: Redis applied the write in memory. A Redis crash can lose the last second (everysec)
 *   or everything since the last snapshot. Development only.
 * - `aof`: Redis runs with `appendonly yes` and `appendfsync always`, so it fsyncs the AOF before
 *   it answers the write; the vault checks that setting on every (re)connection and refuses writes
 *   while it does not hold.
 * - `replica:N[:timeoutMs]`: after the write the vault sends `WAIT N timeoutMs` on the same
 *   connection; fewer than N replicas acknowledging means the write is not relied on (503).
 */
export type WriteAck = { kind: 'none' } | { kind: 'aof' } | { kind: 'replicas'; replicas: number; timeoutMs: number };

export const DEFAULT_WAIT_TIMEOUT_MS = 500;

export function parseWriteAck(text: string): { ok: true; ack: WriteAck } | { ok: false; problem: string } {
  const value = text.trim();
  if (value === 'none') return { ok: true, ack: { kind: 'none' } };
  if (value === 'aof') return { ok: true, ack: { kind: 'aof' } };
  const match = /^replica:(\d{1,2})(?::(\d{1,6}))?$/.exec(value);
  if (match) {
    const replicas = Number(match[1]);
    const timeoutMs = match[2] === undefined ? DEFAULT_WAIT_TIMEOUT_MS : Number(match[2]);
    if (replicas < 1) return { ok: false, problem: 'replica:N needs N >= 1' };
    // WAIT 0 would block forever: a write must never wait without a bound.
    if (timeoutMs < 1) return { ok: false, problem: 'the WAIT timeout must be at least 1 ms' };
    return { ok: true, ack: { kind: 'replicas', replicas, timeoutMs } };
  }
  return { ok: false, problem: 'must be none, aof or replica:N[:timeoutMs] (e.g. replica:1:500)' };
}

export function describeWriteAck(ack: WriteAck): string {
  if (ack.kind === 'replicas') return `replica:${ack.replicas}:${ack.timeoutMs}`;
  return ack.kind;
}

/** An env variable holding a WriteAck (`none` when unset). */
export function writeAckEnv() {
  return z
    .string()
    .default('none')
    .transform((text, ctx): WriteAck => {
      const parsed = parseWriteAck(text);
      if (parsed.ok) return parsed.ack;
      ctx.addIssue({ code: 'custom', message: parsed.problem });
      return z.NEVER;
    });
}

/**
 * The checks a WriteAck variable needs beside the others: a Redis to write to, and a WAIT that
 * ends before the command timeout (otherwise the timeout fires first and every write would look
 * like an outage). `ack` may hold raw input when its own check failed: only a parsed shape counts.
 */
export function checkWriteAckEnv(
  name: string,
  ack: WriteAck | undefined,
  opts: { hasRedis: boolean; redisVariables: string; commandTimeoutMs: number },
  ctx: z.RefinementCtx,
): void {
  if (ack?.kind !== undefined && ack.kind !== 'none' && !opts.hasRedis) {
    ctx.addIssue({ code: 'custom', path: [name], message: `needs ${opts.redisVariables}` });
  }
  if (ack?.kind === 'replicas' && ack.timeoutMs >= opts.commandTimeoutMs) {
    ctx.addIssue({ code: 'custom', path: [name], message: 'the WAIT timeout must be below REDIS_COMMAND_TIMEOUT_MS' });
  }
}

import { Cluster, type Redis } from 'ioredis';
import type { Logger } from '../logger';
import type { WriteAck } from '../writeAck';
import { AofGuard } from './aofGuard';
import { isStaleSlotMapError, type RedisClient } from './client';

/** A command of a pipeline as ioredis takes it: its name (or a script defined on the client), then its arguments. */
export type PipelineCommand = [string, ...Array<string | number | Buffer>];

/**
 * Fewer replicas acknowledged the writes than the WriteAck asks for. The writes themselves may
 * have landed on the primary: `replies` are theirs, so a caller can undo what it wrote.
 */
export class WriteNotAcknowledged extends Error {
  constructor(
    readonly acked: number | undefined,
    readonly wanted: number,
    readonly replies: unknown[],
    cause?: Error,
  ) {
    super(`WAIT: ${acked ?? 'no'} of ${wanted} replicas acknowledged`, cause === undefined ? undefined : { cause });
  }
}

/** The WAIT that must follow writes under `ack`, on the connection that took them; none for `none` and `aof`. */
export function waitCommand(ack: WriteAck): PipelineCommand | undefined {
  return ack.kind === 'replicas' ? ['wait', ack.replicas, ack.timeoutMs] : undefined;
}

/**
 * WAIT's reply in a pipeline judged against `ack`: undefined when enough replicas acknowledged
 * (or `ack` asks for none), otherwise the shortfall. WAIT only counts the writes of the connection
 * it is sent on: it must go in the same pipeline, on the same node, as the writes it confirms.
 */
export function unacknowledged(
  ack: WriteAck,
  reply: [Error | null, unknown] | undefined,
  replies: unknown[] = [],
): WriteNotAcknowledged | undefined {
  if (ack.kind !== 'replicas') return undefined;
  const [err, count] = reply ?? [new Error('no reply to WAIT'), undefined];
  if (err) return new WriteNotAcknowledged(undefined, ack.replicas, replies, err);
  const acked = Number(count);
  return acked >= ack.replicas ? undefined : new WriteNotAcknowledged(acked, ack.replicas, replies);
}

/** The servers that accept writes: the one Redis, or every Cluster master. */
export function primariesOf(redis: RedisClient): Redis[] {
  return redis instanceof Cluster ? redis.nodes('master') : [redis];
}

/**
 * Writes that are relied on only once they are as durable as a WriteAck asks (VAULT_WRITE_ACK for
 * cards, IDEMPOTENCY_WRITE_ACK for idempotency records): with `aof`, only while every primary
 * fsyncs before it answers; with `replica:N`, only once WAIT says N replicas have them, so a
 * failover to a replica that was behind cannot lose them.
 */
export class AcknowledgedWriter {
  private readonly aofGuard: AofGuard;

  /** `variable` names the setting in log lines. */
  constructor(
    private readonly redis: RedisClient,
    readonly ack: WriteAck,
    logger: Logger,
    variable: string,
  ) {
    this.aofGuard = new AofGuard(logger, variable);
    // A (re)connection may have reached another server (a failover): check its settings again.
    redis.on('ready', () => this.aofGuard.reset());
  }

  /** `aof`: throws while a primary would not fsync a write before answering it; otherwise nothing. */
  async ensureDurable(): Promise<void> {
    if (this.ack.kind === 'aof') await this.aofGuard.ensureDurable(primariesOf(this.redis));
  }

  /**
   * The commands, then (replica:N) WAIT, in one pipeline: in a Cluster their keys must share a
   * slot, so the pipeline and its WAIT go to the one master that holds them. Resolves with the
   * commands' replies once acknowledged; throws a command's error, or WriteNotAcknowledged.
   */
  async write(commands: readonly PipelineCommand[]): Promise<unknown[]> {
    await this.ensureDurable();
    const wait = waitCommand(this.ack);
    const results = await this.redis.pipeline(wait === undefined ? [...commands] : [...commands, wait]).exec();
    if (results === null) throw new Error('redis pipeline was aborted');
    // ioredis follows a pipeline's MOVED only when every reply is that same error, and WAIT sent
    // to a replica answers differently: without a refresh of the slot map, every write of a slot
    // whose master was failed over went to the old master again, and failed, until something
    // else happened to refresh the map. The caller retries the write (service_unavailable).
    if (this.redis instanceof Cluster && results.some(([err]) => isStaleSlotMapError(err))) this.redis.refreshSlotsCache();
    const replies = results.slice(0, commands.length).map(([, reply]) => reply);
    for (const [err] of results.slice(0, commands.length)) if (err) throw err;
    const shortfall = unacknowledged(this.ack, results[commands.length], replies);
    if (shortfall !== undefined) throw shortfall;
    return replies;
  }
}

import type { Redis } from 'ioredis';
import type { Logger } from '../logger';

/** How long a successful check of the AOF settings is trusted before it is repeated. */
const AOF_RECHECK_MS = 30_000;

/** Redis answers CONFIG GET with [name, value]. */
async function configValue(node: Redis, name: string): Promise<string | undefined> {
  const reply = (await node.call('CONFIG', 'GET', name)) as unknown;
  return Array.isArray(reply) && typeof reply[1] === 'string' ? reply[1] : undefined;
}

/** A WriteAck of `aof` (VAULT_WRITE_ACK, IDEMPOTENCY_WRITE_ACK): refuses writes while a primary would not fsync them before answering. */
export class AofGuard {
  /** When the AOF settings of every primary were last seen durable; 0: check before the next write. */
  private verifiedAt = 0;
  private lastProblem: string | undefined;

  /** `variable` names the setting in the log lines, e.g. `VAULT_WRITE_ACK`. */
  constructor(
    private readonly logger: Logger,
    private readonly variable: string,
  ) {}

  /** After a (re)connection, which may have reached another server (failover): check again. */
  reset(): void {
    this.verifiedAt = 0;
  }

  /**
   * aof mode: every primary must run appendonly yes + appendfsync always, which makes Redis fsync
   * before it answers a write. Checked after every (re)connection and every AOF_RECHECK_MS; when
   * CONFIG is disabled (managed Redis) aof_enabled from INFO is accepted and the fsync policy is
   * the operator's promise (logged once).
   */
  async ensureDurable(primaries: readonly Redis[]): Promise<void> {
    if (Date.now() - this.verifiedAt < AOF_RECHECK_MS) return;
    const problems: string[] = [];
    for (const node of primaries) {
      let appendonly: string | undefined;
      let appendfsync: string | undefined;
      try {
        appendonly = await configValue(node, 'appendonly');
        appendfsync = await configValue(node, 'appendfsync');
      } catch {
        const info = await node.info('persistence');
        if (!/^aof_enabled:1\r?$/m.test(info)) problems.push('appendonly is off');
        else this.warnOnce(`CONFIG is not available: appendfsync cannot be verified; ${this.variable}=aof trusts it is "always"`);
        continue;
      }
      if (appendonly !== 'yes') problems.push('appendonly is not yes');
      if (appendfsync !== 'always') problems.push(`appendfsync is ${appendfsync ?? 'unknown'}, not always`);
    }
    if (problems.length > 0) {
      this.warnOnce(`${this.variable}=aof but Redis does not fsync every write (${problems.join('; ')}): writes refused`);
      throw new Error(`redis persistence does not meet ${this.variable}=aof`);
    }
    this.lastProblem = undefined;
    this.verifiedAt = Date.now();
  }

  private warnOnce(problem: string): void {
    if (problem === this.lastProblem) return;
    this.lastProblem = problem;
    this.logger.error(problem);
  }
}

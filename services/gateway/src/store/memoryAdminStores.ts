import { applyOperatorChange, type OperatorChange } from '../domain/admin/operators';
import type { AuditLog, AuditRecord, LoginThrottle, OperatorRecord, OperatorStore, SessionRecord, SessionStore } from './adminStores';

/** For a single local gateway without Redis: lost on restart, invisible to the CLI. */
export class MemoryOperatorStore implements OperatorStore {
  private readonly byId = new Map<string, OperatorRecord>();

  async create(op: OperatorRecord): Promise<boolean> {
    if ([...this.byId.values()].some((o) => o.email === op.email) || this.byId.has(op.id)) return false;
    this.byId.set(op.id, structuredClone(op));
    return true;
  }

  async get(id: string): Promise<OperatorRecord | undefined> {
    const op = this.byId.get(id);
    return op ? structuredClone(op) : undefined;
  }

  async findByEmail(email: string): Promise<OperatorRecord | undefined> {
    const op = [...this.byId.values()].find((o) => o.email === email);
    return op ? structuredClone(op) : undefined;
  }

  async list(): Promise<OperatorRecord[]> {
    return [...this.byId.values()].map((o) => structuredClone(o)).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async update(id: string, change: OperatorChange): Promise<OperatorRecord | undefined> {
    const op = this.byId.get(id);
    if (!op) return undefined;
    applyOperatorChange(op, change);
    return structuredClone(op);
  }
}

export class MemorySessionStore implements SessionStore {
  private readonly sessions = new Map<string, { session: SessionRecord; until: number }>();

  constructor(private readonly clock: () => number = Date.now) {}

  async create(digest: string, session: SessionRecord, ttlMs: number): Promise<void> {
    this.sessions.set(digest, { session: structuredClone(session), until: this.clock() + ttlMs });
  }

  async get(digest: string): Promise<SessionRecord | undefined> {
    const entry = this.sessions.get(digest);
    if (!entry) return undefined;
    if (entry.until <= this.clock()) {
      this.sessions.delete(digest);
      return undefined;
    }
    return structuredClone(entry.session);
  }

  async touch(digest: string, ttlMs: number): Promise<void> {
    const entry = this.sessions.get(digest);
    if (entry) entry.until = this.clock() + ttlMs;
  }

  async delete(digest: string): Promise<void> {
    this.sessions.delete(digest);
  }
}

export class MemoryLoginThrottle implements LoginThrottle {
  private readonly windows = new Map<string, { count: number; until: number }>();

  constructor(private readonly clock: () => number = Date.now) {}

  async hit(bucket: string, windowMs: number): Promise<{ count: number; resetInMs: number }> {
    const now = this.clock();
    let entry = this.windows.get(bucket);
    if (!entry || entry.until <= now) {
      entry = { count: 0, until: now + windowMs };
      this.windows.set(bucket, entry);
    }
    entry.count++;
    return { count: entry.count, resetInMs: entry.until - now };
  }

  async reset(bucket: string): Promise<void> {
    this.windows.delete(bucket);
    this.failures.delete(bucket);
  }

  private readonly failures = new Map<string, number[]>();
  private readonly locks = new Map<string, number>();
  private readonly claims = new Map<string, number>();

  async recordFailure(bucket: string, windowMs: number, nowMs: number): Promise<number> {
    const log = (this.failures.get(bucket) ?? []).filter((at) => at > nowMs - windowMs);
    log.push(nowMs);
    this.failures.set(bucket, log.slice(-MAX_FAILURES_LOGGED));
    return Math.min(log.length, MAX_FAILURES_LOGGED);
  }

  async lock(bucket: string, durationMs: number): Promise<void> {
    this.locks.set(bucket, this.clock() + durationMs);
  }

  async lockRemainingMs(bucket: string): Promise<number> {
    const until = this.locks.get(bucket);
    return until === undefined ? 0 : Math.max(0, until - this.clock());
  }

  async unlock(bucket: string): Promise<void> {
    this.locks.delete(bucket);
  }

  async claimOnce(key: string, ttlMs: number): Promise<boolean> {
    const until = this.claims.get(key);
    if (until !== undefined && until > this.clock()) return false;
    this.claims.set(key, this.clock() + ttlMs);
    return true;
  }
}

/** Only counts up to the lockout thresholds (at most 10) matter: the log of a bucket stays small. */
export const MAX_FAILURES_LOGGED = 100;

/** Like the Redis layout: one capped list for everything and one per merchant. */
export class MemoryAuditLog implements AuditLog {
  private readonly all: AuditRecord[] = [];
  private readonly byMerchant = new Map<string, AuditRecord[]>();

  constructor(private readonly maxEntries: number) {}

  private push(list: AuditRecord[], record: AuditRecord): void {
    list.unshift(structuredClone(record));
    if (list.length > this.maxEntries) list.length = this.maxEntries;
  }

  async append(record: AuditRecord): Promise<void> {
    this.push(this.all, record);
    if (record.merchantId !== null) {
      const list = this.byMerchant.get(record.merchantId) ?? [];
      this.byMerchant.set(record.merchantId, list);
      this.push(list, record);
    }
  }

  async list(options: { merchantId?: string; limit: number }): Promise<AuditRecord[]> {
    const list = options.merchantId === undefined ? this.all : (this.byMerchant.get(options.merchantId) ?? []);
    return list.slice(0, options.limit).map((r) => structuredClone(r));
  }
}

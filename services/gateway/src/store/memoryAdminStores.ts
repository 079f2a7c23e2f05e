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

  async update(id: string, change: { passwordHash?: string; disabledAt?: string | null }): Promise<OperatorRecord | undefined> {
    const op = this.byId.get(id);
    if (!op) return undefined;
    applyOperatorChange(op, change);
    return structuredClone(op);
  }
}

export function applyOperatorChange(op: OperatorRecord, change: { passwordHash?: string; disabledAt?: string | null }): void {
  if (change.passwordHash !== undefined) op.passwordHash = change.passwordHash;
  if (change.disabledAt === null) delete op.disabledAt;
  else if (change.disabledAt !== undefined) op.disabledAt = change.disabledAt;
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
  }
}

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

import type { AuditRecord } from '../domain/admin/audit';
import type { OperatorRecord } from '../domain/admin/operators';
import type { SessionRecord } from '../domain/admin/sessions';

export type { AuditRecord, OperatorRecord, SessionRecord };

/**
 * The dashboard's state, each behind an interface with a Redis and an in-memory implementation
 * (like ApiKeyStore). Redis implementations throw TesseraError('service_unavailable') when Redis
 * cannot answer.
 */
export interface OperatorStore {
  /** Resolves false (and writes nothing) when the email is already taken. */
  create(op: OperatorRecord): Promise<boolean>;
  get(id: string): Promise<OperatorRecord | undefined>;
  findByEmail(email: string): Promise<OperatorRecord | undefined>;
  list(): Promise<OperatorRecord[]>;
  /** Replaces the password hash and/or the disabled mark; undefined when there is no such operator. */
  update(id: string, change: { passwordHash?: string; disabledAt?: string | null }): Promise<OperatorRecord | undefined>;
}

/** Sessions are keyed by the digest of their id and vanish by themselves after their TTL. */
export interface SessionStore {
  create(digest: string, session: SessionRecord, ttlMs: number): Promise<void>;
  get(digest: string): Promise<SessionRecord | undefined>;
  /** Extends the TTL (idle timeout) of a live session. */
  touch(digest: string, ttlMs: number): Promise<void>;
  delete(digest: string): Promise<void>;
}

/** Fixed-window counters for login attempts, shared by every gateway replica. */
export interface LoginThrottle {
  /** Counts one attempt in the bucket's window; returns the count so far and when the window ends. */
  hit(bucket: string, windowMs: number): Promise<{ count: number; resetInMs: number }>;
  reset(bucket: string): Promise<void>;
}

/** Capped, newest first. `merchantId` undefined reads the whole log; a merchant id reads only its entries. */
export interface AuditLog {
  append(record: AuditRecord): Promise<void>;
  list(options: { merchantId?: string; limit: number }): Promise<AuditRecord[]>;
}

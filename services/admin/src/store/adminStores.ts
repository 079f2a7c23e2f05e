import type { OperatorChange, OperatorRecord } from '../domain/operators';
import type { SessionRecord } from '../domain/sessions';

export type { OperatorRecord, SessionRecord };

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
  /** Applies the change (applyOperatorChange); undefined when there is no such operator. */
  update(id: string, change: OperatorChange): Promise<OperatorRecord | undefined>;
}

/** Sessions are keyed by the digest of their id and vanish by themselves after their TTL. */
export interface SessionStore {
  create(digest: string, session: SessionRecord, ttlMs: number): Promise<void>;
  get(digest: string): Promise<SessionRecord | undefined>;
  /** Extends the TTL (idle timeout) of a live session. */
  touch(digest: string, ttlMs: number): Promise<void>;
  delete(digest: string): Promise<void>;
}

/** Sign-in attempt counters, failure logs and locks, shared by every gateway replica. */
export interface LoginThrottle {
  /** Counts one attempt in the bucket's fixed window; returns the count so far and when the window ends. */
  hit(bucket: string, windowMs: number): Promise<{ count: number; resetInMs: number }>;
  /** Forgets the bucket's attempts and failures (not its lock). */
  reset(bucket: string): Promise<void>;
  /** Logs one failure; returns the failures in the sliding window ending now, this one included. */
  recordFailure(bucket: string, windowMs: number, nowMs: number): Promise<number>;
  lock(bucket: string, durationMs: number): Promise<void>;
  /** Milliseconds the bucket stays locked; 0 when it is not. */
  lockRemainingMs(bucket: string): Promise<number>;
  unlock(bucket: string): Promise<void>;
  /** True for the first caller only, for `ttlMs`: a one-time code accepted once across replicas. */
  claimOnce(key: string, ttlMs: number): Promise<boolean>;
}

import type { Redis } from 'ioredis';
import { redisUnavailable as unavailable } from '@tessera/common/redis';
import type { AuditRecord } from '../domain/adminAudit';
import { ADMIN_SLOT } from '../domain/slots';

/** Capped, newest first. `merchantId` undefined reads the whole log; a merchant id reads only its entries. */
export interface AuditLog {
  append(record: AuditRecord): Promise<void>;
  list(options: { merchantId?: string; limit: number }): Promise<AuditRecord[]>;
}

/**
 * The audit trail's key names, in the admin slot (domain/slots.ts) with the operators' keys, as
 * they were before merchant slots, without the slot prefix (the gateway's layout migration renames
 * them on a standalone Redis).
 */
export const AUDIT_KEYS = {
  auditAll: 'tessera:audit',
  auditMerchant: 'tessera:audit:merchant:',
};
/**
 * Every key name of the admin slot, without the slot prefix: the operators' and the dashboard
 * sessions' (the admin service's store/redisAdminStores.ts) and the audit trail's. Here, beside
 * the audit's, so that the gateway's layout migration copies them without the admin's stores.
 */
export const ADMIN_KEYS = {
  operator: 'tessera:operator:',
  operatorEmail: 'tessera:operator-email:',
  allOperators: 'tessera:operators',
  session: 'tessera:admin-session:',
  throttle: 'tessera:admin-login:',
  ...AUDIT_KEYS,
};
const AUDIT_ALL = ADMIN_SLOT + AUDIT_KEYS.auditAll;
const AUDIT_MERCHANT_PREFIX = ADMIN_SLOT + AUDIT_KEYS.auditMerchant;

async function guarded<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    throw unavailable(err);
  }
}

/**
 * Two capped lists, newest first: `tessera:audit` (everything, for platform operators) and
 * `tessera:audit:merchant:<id>` (what a merchant's operators may read), written in one MULTI.
 */
export class RedisAuditLog implements AuditLog {
  constructor(
    private readonly redis: Redis,
    private readonly maxEntries: number,
  ) {}

  append(record: AuditRecord): Promise<void> {
    return guarded(async () => {
      const line = JSON.stringify(record);
      const tx = this.redis
        .multi()
        .lpush(AUDIT_ALL, line)
        .ltrim(AUDIT_ALL, 0, this.maxEntries - 1);
      if (record.merchantId !== null) {
        const key = AUDIT_MERCHANT_PREFIX + record.merchantId;
        tx.lpush(key, line).ltrim(key, 0, this.maxEntries - 1);
      }
      const results = await tx.exec();
      const failed = results?.find(([err]) => err !== null);
      if (results === null || failed) throw failed?.[0] ?? new Error('audit transaction aborted');
    });
  }

  list(options: { merchantId?: string; limit: number }): Promise<AuditRecord[]> {
    return guarded(async () => {
      const key = options.merchantId === undefined ? AUDIT_ALL : AUDIT_MERCHANT_PREFIX + options.merchantId;
      const lines = await this.redis.lrange(key, 0, options.limit - 1);
      return lines.map((line) => JSON.parse(line) as AuditRecord);
    });
  }
}

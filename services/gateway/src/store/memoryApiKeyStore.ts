import type { ApiKeyRecord, ApiKeyStore, KeyRestrictions } from './apiKeyStore';

/**
 * For a single local gateway without Redis: keys live and die with the process, and the CLI
 * (another process) cannot see them.
 */
export class MemoryApiKeyStore implements ApiKeyStore {
  private readonly byId = new Map<string, ApiKeyRecord>();
  private readonly idByDigest = new Map<string, string>();

  async create(record: ApiKeyRecord): Promise<boolean> {
    if (this.idByDigest.has(record.digest) || this.byId.has(record.id)) return false;
    this.byId.set(record.id, structuredClone(record));
    this.idByDigest.set(record.digest, record.id);
    return true;
  }

  async findByDigest(digest: string): Promise<ApiKeyRecord | undefined> {
    const id = this.idByDigest.get(digest);
    return id === undefined ? undefined : this.get(id);
  }

  async rehashDigest(id: string, fromDigest: string, toDigest: string, pepperId: string): Promise<boolean> {
    const record = this.byId.get(id);
    if (!record || record.digest !== fromDigest) return false;
    if (fromDigest === toDigest) {
      record.pepperId = pepperId;
      return true;
    }
    if (this.idByDigest.has(toDigest)) return false;
    this.idByDigest.delete(fromDigest);
    this.idByDigest.set(toDigest, id);
    record.digest = toDigest;
    record.pepperId = pepperId;
    return true;
  }

  async get(id: string): Promise<ApiKeyRecord | undefined> {
    const record = this.byId.get(id);
    return record ? structuredClone(record) : undefined;
  }

  async list(): Promise<ApiKeyRecord[]> {
    return [...this.byId.values()].map((r) => structuredClone(r)).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async updateRestrictions(id: string, restrictions: KeyRestrictions, at: Date): Promise<ApiKeyRecord | undefined> {
    const record = this.byId.get(id);
    if (!record) return undefined;
    record.allowedCidrs = [...restrictions.allowedCidrs];
    record.allowedDomains = [...restrictions.allowedDomains];
    if (restrictions.allowedOrigins !== undefined) record.allowedOrigins = [...restrictions.allowedOrigins];
    record.updatedAt = at.toISOString();
    return structuredClone(record);
  }

  async revoke(id: string, at: Date): Promise<ApiKeyRecord | undefined> {
    const record = this.byId.get(id);
    if (!record) return undefined;
    record.revokedAt ??= at.toISOString();
    return structuredClone(record);
  }

  async scheduleExpiry(id: string, expiresAt: Date): Promise<ApiKeyRecord | undefined> {
    const record = this.byId.get(id);
    if (!record) return undefined;
    if (record.revokedAt === undefined && !(record.expiresAt !== undefined && Date.parse(record.expiresAt) <= expiresAt.getTime())) {
      record.expiresAt = expiresAt.toISOString();
    }
    return structuredClone(record);
  }

  async touchLastUse(key: Pick<ApiKeyRecord, 'id'>, at: Date, ip: string | undefined): Promise<void> {
    const record = this.byId.get(key.id);
    if (!record) return;
    record.lastUsedAt = at.toISOString();
    if (ip !== undefined) record.lastUsedIp = ip;
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {}
}

import type { Redis } from 'ioredis';
import { redisUnavailable } from '@tessera/common/redis';
import { merchantSlot } from '../domain/slots';

/** Per-merchant settings that are not tied to one API key. Absent record: defaults. */
export interface MerchantSettings {
  /** Canonical PSP host patterns (see domain/pspHosts.ts); empty: any public host. */
  pspHosts: string[];
  /** Canonical return and cancel URLs of the hosted payment page (see domain/returnUrls.ts). */
  returnUrls?: string[];
  updatedAt: string;
}

/** What a request needs of a merchant's settings: it reads them, never changes them. */
export interface MerchantSettingsReader {
  get(merchantId: string): Promise<MerchantSettings | undefined>;
}

export interface MerchantSettingsStore extends MerchantSettingsReader {
  setPspHosts(merchantId: string, pspHosts: readonly string[], now: Date): Promise<MerchantSettings>;
  setReturnUrls(merchantId: string, returnUrls: readonly string[], now: Date): Promise<MerchantSettings>;
}

export const MERCHANT_SETTINGS_PREFIX = 'tessera:merchant-settings:';

/** Where a merchant's settings live, in its slot: the key store's lookup reads them there too. */
export const merchantSettingsKey = (merchantId: string): string => MERCHANT_SETTINGS_PREFIX + merchantSlot(merchantId);

/** A stored settings document as read, tolerating fields written by older versions or missing. */
export function parseMerchantSettings(raw: string | null | undefined): MerchantSettings | undefined {
  if (raw === null || raw === undefined) return undefined;
  const parsed = JSON.parse(raw) as Partial<MerchantSettings>;
  return {
    pspHosts: Array.isArray(parsed.pspHosts) ? parsed.pspHosts : [],
    returnUrls: Array.isArray(parsed.returnUrls) ? parsed.returnUrls : [],
    updatedAt: parsed.updatedAt ?? '',
  };
}

/**
 * Layout: `tessera:merchant-settings:{m:<merchantId>}` JSON, in the merchant's slot
 * (domain/slots.ts). A read failure surfaces as service_unavailable, so /v1/proxy fails closed
 * rather than skipping a merchant's allowlist.
 */
export class RedisMerchantSettingsStore implements MerchantSettingsStore {
  constructor(private readonly redis: Redis) {}

  async get(merchantId: string): Promise<MerchantSettings | undefined> {
    try {
      return parseMerchantSettings(await this.redis.get(merchantSettingsKey(merchantId)));
    } catch (err) {
      throw redisUnavailable(err);
    }
  }

  async setPspHosts(merchantId: string, pspHosts: readonly string[], now: Date): Promise<MerchantSettings> {
    try {
      // One field today; a read-modify-write race between two admins only matters once there are more.
      const before = await this.get(merchantId);
      const s: MerchantSettings = { ...(before ?? {}), pspHosts: [...pspHosts], updatedAt: now.toISOString() };
      await this.redis.set(merchantSettingsKey(merchantId), JSON.stringify(s));
      return s;
    } catch (err) {
      throw redisUnavailable(err);
    }
  }

  async setReturnUrls(merchantId: string, returnUrls: readonly string[], now: Date): Promise<MerchantSettings> {
    try {
      const before = await this.get(merchantId);
      const s: MerchantSettings = { pspHosts: [], ...(before ?? {}), returnUrls: [...returnUrls], updatedAt: now.toISOString() };
      await this.redis.set(merchantSettingsKey(merchantId), JSON.stringify(s));
      return s;
    } catch (err) {
      throw redisUnavailable(err);
    }
  }
}

import type { Redis } from 'ioredis';
import type { KeyMode } from '@tessera/common';
import { redisUnavailable } from '@tessera/common/redis';
import { merchantSlot } from '../domain/slots';
import {
  PAGE_INVENTORY_LIMITS,
  PAGE_INVENTORY_RETENTION_SECONDS,
  type CspViolation,
  type PageEvent,
  type PageRecord,
  type PageState,
  type PageUpdate,
  type ScriptRecord,
} from '../domain/pageInventory';

/** What the fields service does with the inventory: reads one page, writes what a report or a violation changed. */
export interface PageInventoryWriter {
  /** The page's record and scripts, and how many pages the merchant has in this mode (the page cap). */
  loadPage(merchantId: string, mode: KeyMode, pageId: string): Promise<PageState & { pageCount: number }>;
  savePage(merchantId: string, mode: KeyMode, update: PageUpdate): Promise<void>;
  saveViolations(
    merchantId: string,
    mode: KeyMode,
    page: PageRecord,
    violations: readonly CspViolation[],
    events: readonly PageEvent[],
  ): Promise<void>;
}

/** What the dashboard reads; it never writes what pages reported. */
export interface PageInventoryReader {
  listPages(merchantId: string, mode: KeyMode): Promise<PageRecord[]>;
  pageDetail(
    merchantId: string,
    mode: KeyMode,
    pageId: string,
    counts: { events: number; violations: number },
  ): Promise<{ scripts: ScriptRecord[]; events: PageEvent[]; violations: CspViolation[] }>;
}

export const PAGE_INVENTORY_PREFIX = 'tessera:page-inventory:';

/** Everything of one merchant and mode, in the merchant's slot (domain/slots.ts): one report's writes are one MULTI. */
const scopeOf = (merchantId: string, mode: KeyMode): string => `${PAGE_INVENTORY_PREFIX}${merchantSlot(merchantId)}:${mode}`;
const pagesKey = (merchantId: string, mode: KeyMode): string => `${scopeOf(merchantId, mode)}:pages`;
const pageKey = (merchantId: string, mode: KeyMode, pageId: string, what: 'scripts' | 'events' | 'violations'): string =>
  `${scopeOf(merchantId, mode)}:${what}:${pageId}`;

const parsed = <T>(raw: string): T | undefined => {
  try {
    return JSON.parse(raw) as T;
  } catch {
    return undefined;
  }
};
const defined = <T>(value: T | undefined): value is T => value !== undefined;

/**
 * Layout, per merchant and mode: a hash of pages (`…:pages`, page id → record), and per page a
 * hash of scripts (`…:scripts:<page>`, key → record), a list of events and one of CSP violations
 * (newest first, trimmed to PAGE_INVENTORY_LIMITS). Every key expires
 * PAGE_INVENTORY_RETENTION_SECONDS after the last write to the page, so a page that stops
 * reporting leaves with its history a year later. The page cap is checked before a new page is
 * added (HLEN, then HSET: two reports of new pages at once may pass it by one each, which the
 * next report of a new page sees).
 */
export class RedisPageInventoryStore implements PageInventoryWriter, PageInventoryReader {
  constructor(private readonly redis: Redis) {}

  async loadPage(merchantId: string, mode: KeyMode, pageId: string): Promise<PageState & { pageCount: number }> {
    try {
      const [page, scripts, pageCount] = await Promise.all([
        this.redis.hget(pagesKey(merchantId, mode), pageId),
        this.redis.hgetall(pageKey(merchantId, mode, pageId, 'scripts')),
        this.redis.hlen(pagesKey(merchantId, mode)),
      ]);
      const records = Object.values(scripts)
        .map((raw) => parsed<ScriptRecord>(raw))
        .filter(defined);
      return {
        page: page === null ? undefined : parsed<PageRecord>(page),
        scripts: new Map(records.map((r) => [r.key, r])),
        pageCount,
      };
    } catch (err) {
      throw redisUnavailable(err);
    }
  }

  async savePage(merchantId: string, mode: KeyMode, update: PageUpdate): Promise<void> {
    const id = update.page.id;
    const multi = this.redis.multi();
    multi.hset(pagesKey(merchantId, mode), id, JSON.stringify(update.page));
    if (update.scripts.length > 0) {
      multi.hset(pageKey(merchantId, mode, id, 'scripts'), Object.fromEntries(update.scripts.map((s) => [s.key, JSON.stringify(s)])));
    }
    this.pushCapped(multi, pageKey(merchantId, mode, id, 'events'), update.events, PAGE_INVENTORY_LIMITS.eventsPerPage);
    this.expireAll(multi, merchantId, mode, id);
    await this.exec(multi);
  }

  async saveViolations(
    merchantId: string,
    mode: KeyMode,
    page: PageRecord,
    violations: readonly CspViolation[],
    events: readonly PageEvent[],
  ): Promise<void> {
    const multi = this.redis.multi();
    multi.hset(pagesKey(merchantId, mode), page.id, JSON.stringify(page));
    this.pushCapped(multi, pageKey(merchantId, mode, page.id, 'violations'), violations, PAGE_INVENTORY_LIMITS.violationsPerPage);
    this.pushCapped(multi, pageKey(merchantId, mode, page.id, 'events'), events, PAGE_INVENTORY_LIMITS.eventsPerPage);
    this.expireAll(multi, merchantId, mode, page.id);
    await this.exec(multi);
  }

  async listPages(merchantId: string, mode: KeyMode): Promise<PageRecord[]> {
    try {
      const pages = Object.values(await this.redis.hgetall(pagesKey(merchantId, mode)))
        .map((raw) => parsed<PageRecord>(raw))
        .filter(defined);
      return pages.sort((a, b) => `${a.origin}${a.path}`.localeCompare(`${b.origin}${b.path}`));
    } catch (err) {
      throw redisUnavailable(err);
    }
  }

  async pageDetail(
    merchantId: string,
    mode: KeyMode,
    pageId: string,
    counts: { events: number; violations: number },
  ): Promise<{ scripts: ScriptRecord[]; events: PageEvent[]; violations: CspViolation[] }> {
    try {
      // LRANGE 0 -1 is the whole list: a count of 0 reads nothing.
      const newest = (what: 'events' | 'violations', count: number): Promise<string[]> =>
        count <= 0 ? Promise.resolve([]) : this.redis.lrange(pageKey(merchantId, mode, pageId, what), 0, count - 1);
      const [scripts, events, violations] = await Promise.all([
        this.redis.hgetall(pageKey(merchantId, mode, pageId, 'scripts')),
        newest('events', counts.events),
        newest('violations', counts.violations),
      ]);
      return {
        scripts: Object.values(scripts)
          .map((raw) => parsed<ScriptRecord>(raw))
          .filter(defined)
          .sort((a, b) => a.firstSeenAt.localeCompare(b.firstSeenAt) || a.key.localeCompare(b.key)),
        events: events.map((raw) => parsed<PageEvent>(raw)).filter(defined),
        violations: violations.map((raw) => parsed<CspViolation>(raw)).filter(defined),
      };
    } catch (err) {
      throw redisUnavailable(err);
    }
  }

  private pushCapped(multi: ReturnType<Redis['multi']>, key: string, entries: readonly unknown[], cap: number): void {
    if (entries.length === 0) return;
    multi.lpush(key, ...entries.map((e) => JSON.stringify(e)));
    multi.ltrim(key, 0, cap - 1);
  }

  private expireAll(multi: ReturnType<Redis['multi']>, merchantId: string, mode: KeyMode, pageId: string): void {
    multi.expire(pagesKey(merchantId, mode), PAGE_INVENTORY_RETENTION_SECONDS);
    for (const what of ['scripts', 'events', 'violations'] as const)
      multi.expire(pageKey(merchantId, mode, pageId, what), PAGE_INVENTORY_RETENTION_SECONDS);
  }

  private async exec(multi: ReturnType<Redis['multi']>): Promise<void> {
    try {
      const results = await multi.exec();
      const failed = results?.find(([err]) => err !== null);
      if (results === null || failed) throw failed?.[0] ?? new Error('transaction aborted');
    } catch (err) {
      throw redisUnavailable(err);
    }
  }
}

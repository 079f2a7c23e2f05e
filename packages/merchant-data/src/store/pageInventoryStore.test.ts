import { applyPageReport, PAGE_INVENTORY_LIMITS, PAGE_INVENTORY_RETENTION_SECONDS, parsePageReport } from '../domain/pageInventory';
import { RedisPageInventoryStore } from './pageInventoryStore';
import { RedisScriptAuthorizationStore } from './scriptAuthorizationStore';
import { useStoreRedis } from '../testing/redis';

const db = useStoreRedis();
const ORIGIN = 'https://shop.example';

describe('RedisPageInventoryStore', () => {
  it('saves a page report and reads it back with its events, in the merchant slot, expiring after the retention', async () => {
    const store = new RedisPageInventoryStore(db.redis);
    const report = parsePageReport({ page: `${ORIGIN}/pay`, scripts: [{ src: 'https://cdn.example/a.js' }], csp: [] }, ORIGIN);
    const state = await store.loadPage('shop', 'test', 'ffffffffffffffff');
    expect(state).toMatchObject({ page: undefined, pageCount: 0 });
    const update = applyPageReport(state, report, new Date());
    await store.savePage('shop', 'test', update);

    expect(await store.listPages('shop', 'test')).toEqual([update.page]);
    expect(await store.listPages('shop', 'live')).toEqual([]);
    const detail = await store.pageDetail('shop', 'test', update.page.id, { events: 10, violations: 10 });
    expect(detail.scripts.map((s) => s.key)).toEqual(['https://cdn.example/a.js']);
    expect(detail.events.map((e) => e.kind)).toEqual(['page_first_seen']);
    const key = `tessera:page-inventory:{m:shop}:test:scripts:${update.page.id}`;
    expect(await db.redis.ttl(key)).toBeGreaterThan(PAGE_INVENTORY_RETENTION_SECONDS - 10);
    expect((await store.loadPage('shop', 'test', update.page.id)).pageCount).toBe(1);
  });

  it('keeps no more events per page than the cap', async () => {
    const store = new RedisPageInventoryStore(db.redis);
    const report = parsePageReport({ page: `${ORIGIN}/many`, scripts: [], csp: [] }, ORIGIN);
    const update = applyPageReport({ page: undefined, scripts: new Map() }, report, new Date());
    const events = Array.from({ length: PAGE_INVENTORY_LIMITS.eventsPerPage + 20 }, () => update.events[0]!);
    await store.savePage('shop', 'test', { ...update, events });
    expect(await db.redis.llen(`tessera:page-inventory:{m:shop}:test:events:${update.page.id}`)).toBe(PAGE_INVENTORY_LIMITS.eventsPerPage);
  });
});

describe('RedisScriptAuthorizationStore', () => {
  it('keeps script authorizations and the accepted policy per page', async () => {
    const store = new RedisScriptAuthorizationStore(db.redis);
    const at = new Date().toISOString();
    await store.authorizeScript('shop', 'test', 'aaaaaaaaaaaaaaaa', {
      scriptKey: 'https://cdn.example/a.js',
      hash: null,
      justification: 'Analytics',
      by: 'op@shop',
      at,
    });
    await store.acceptPolicy('shop', 'test', 'aaaaaaaaaaaaaaaa', {
      policy: "script-src 'self'",
      justification: 'New CDN',
      by: 'op@shop',
      at,
    });
    const found = await store.forPage('shop', 'test', 'aaaaaaaaaaaaaaaa');
    expect(found.scripts.get('https://cdn.example/a.js')).toMatchObject({ justification: 'Analytics' });
    expect(found.policy).toMatchObject({ policy: "script-src 'self'" });
    expect((await store.forPage('shop', 'live', 'aaaaaaaaaaaaaaaa')).scripts.size).toBe(0);
  });
});

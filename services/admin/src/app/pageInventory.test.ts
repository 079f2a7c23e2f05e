import { TesseraError } from '@tessera/common';
import {
  applyPageReport,
  applyViolation,
  parseCspReports,
  parsePageReport,
  RedisPageInventoryStore,
  RedisScriptAuthorizationStore,
  type AuditRecord,
} from '@tessera/merchant-data';
import { useAdminRedis } from '../testing/redis';
import type { Caller } from './caller';
import {
  acceptPagePolicy,
  authorizePageScript,
  exportPageInventory,
  getPageInventory,
  pageInventoryCsv,
  pagePolicyFor,
  parseScriptAuthorization,
  type PageInventoryDeps,
} from './pageInventory';

const db = useAdminRedis();
beforeEach(() => db.redis.flushall());
const SHOP = 'https://shop.example';
const STRICT = "script-src 'nonce-a' https://fields.example; frame-src https://fields.example";

const operatorOf = (merchantId: string | null): Caller => ({
  actor: { id: 'op_1', email: 'ops@shop.test' },
  ip: '203.0.113.9',
  merchantId,
});

function deps(): PageInventoryDeps & { entries: AuditRecord[]; store: RedisPageInventoryStore } {
  const entries: AuditRecord[] = [];
  const store = new RedisPageInventoryStore(db.redis);
  return {
    entries,
    store,
    inventory: store,
    authorizations: new RedisScriptAuthorizationStore(db.redis),
    audit: { append: async (record: AuditRecord) => void entries.push(record) },
    now: () => new Date('2026-11-26T12:00:00Z'),
  };
}

/** What the fields service does with one report of tessera.js (app/pageReports.ts), here directly on the store. */
async function report(d: ReturnType<typeof deps>, scripts: unknown[], csp: string[]): Promise<string> {
  const parsed = parsePageReport({ page: `${SHOP}/checkout`, scripts, csp }, SHOP);
  const state = await d.store.loadPage('shop', 'test', (await d.store.listPages('shop', 'test'))[0]?.id ?? '0000000000000000');
  const update = applyPageReport(state.page ? state : { page: undefined, scripts: new Map() }, parsed, new Date());
  await d.store.savePage('shop', 'test', update);
  return update.page.id;
}

describe('the payment-page inventory use cases (SAQ A kit)', () => {
  it('flag new scripts until authorized with a justification, a changed script again, and a weaker policy until accepted', async () => {
    const d = deps();
    const pageId = await report(d, [{ src: 'https://fields.example/js/v1/tessera.js', integrity: 'sha384-' + 'A'.repeat(64) }], [STRICT]);
    let page = (await getPageInventory(d, operatorOf('shop'), 'shop', 'test')).pages[0]!;
    expect(page).toMatchObject({
      id: pageId,
      url: `${SHOP}/checkout`,
      flagged: true,
      flags: { newScripts: 1, changedScripts: 0, policyWeakened: false },
    });

    page = await authorizePageScript(
      d,
      operatorOf('shop'),
      'shop',
      parseScriptAuthorization({
        mode: 'test',
        pageId,
        scriptKey: 'https://fields.example/js/v1/tessera.js',
        justification: 'Tessera card fields',
      }),
    );
    expect(page.flagged).toBe(false);
    expect(page.scripts[0]).toMatchObject({
      status: 'authorized',
      authorization: { justification: 'Tessera card fields', by: 'ops@shop.test' },
    });
    expect(d.entries.map((e) => e.action)).toEqual(['page.script_authorized']);

    await report(
      d,
      [{ src: 'https://fields.example/js/v1/tessera.js', integrity: 'sha384-' + 'B'.repeat(64) }, { src: 'https://cdn.example/tag.js' }],
      [`${STRICT} https://cdn.example 'unsafe-eval'`],
    );
    page = (await getPageInventory(d, operatorOf(null), 'shop', 'test')).pages[0]!;
    expect(page.flags).toEqual({ newScripts: 1, changedScripts: 1, policyWeakened: true });
    expect(page.scripts.find((s) => s.url === 'https://cdn.example/tag.js')).toMatchObject({ status: 'new', unhashable: true });
    expect(page.policyWeakenings.join(' ')).toContain('https://cdn.example');

    page = await acceptPagePolicy(d, operatorOf('shop'), 'shop', {
      mode: 'test',
      pageId,
      justification: 'Tag manager approved by security',
    });
    expect(page.flags.policyWeakened).toBe(false);
  });

  it('flag a header policy weaker than the first one violation reports showed, until accepted', async () => {
    const d = deps();
    const violation = async (policy: string) => {
      const [parsed] = parseCspReports(
        'csp-report',
        { 'csp-report': { 'document-uri': `${SHOP}/pay`, 'blocked-uri': 'inline', 'original-policy': policy } },
        new Date(),
      );
      const known = (await d.store.listPages('shop', 'test'))[0];
      const next = applyViolation(known, parsed!, new Date());
      await d.store.saveViolations('shop', 'test', next.page, [parsed!.violation], next.events);
      return next.page.id;
    };
    const pageId = await violation("script-src 'self'");
    expect((await getPageInventory(d, operatorOf('shop'), 'shop', 'test')).pages[0]!.flagged).toBe(false);
    await violation("script-src 'self' https://evil.example");
    const page = (await getPageInventory(d, operatorOf('shop'), 'shop', 'test')).pages[0]!;
    expect(page.policyWeakenings).toEqual(['Header: Scripts: now also allows https://evil.example.']);
    expect(page.flags.policyWeakened).toBe(true);
    const accepted = await acceptPagePolicy(d, operatorOf('shop'), 'shop', { mode: 'test', pageId, justification: 'New CDN, approved' });
    expect(accepted.flags.policyWeakened).toBe(false);
  });

  it('export every page and script as JSON and CSV, audited, and keep other merchants out', async () => {
    const d = deps();
    await report(d, [{ src: 'https://cdn.example/a.js?x=1' }, { sha256: 'C'.repeat(43) + '=' }], []);
    const evidence = await exportPageInventory(d, operatorOf('shop'), 'shop', 'test');
    expect(evidence).toMatchObject({ merchantId: 'shop', mode: 'test', exportedBy: 'ops@shop.test', pages: [{ url: `${SHOP}/checkout` }] });
    const csv = pageInventoryCsv(evidence).split('\r\n');
    expect(csv[0]).toBe(
      'page,script,inline,hash,hash_source,status,present,first_seen,last_seen,changed_at,authorized_by,authorized_at,justification',
    );
    expect(csv[1]).toContain(`${SHOP}/checkout,https://cdn.example/a.js?x=1,false,,none,new,true`);
    expect(d.entries.map((e) => e.action)).toEqual(['page.inventory_exported']);
    await expect(getPageInventory(d, operatorOf('other'), 'shop', 'test')).rejects.toMatchObject({ code: 'merchant_forbidden' });
    await expect(
      authorizePageScript(d, operatorOf('shop'), 'shop', {
        mode: 'test',
        pageId: 'ffffffffffffffff',
        scriptKey: 'x',
        justification: 'why not',
      }),
    ).rejects.toMatchObject({ code: 'page_script_not_found' });
    expect(() => parseScriptAuthorization({ mode: 'test', pageId: 'ffffffffffffffff', scriptKey: 'x', justification: ' ' })).toThrow(
      TesseraError,
    );
  });

  it('recommend a payment-page policy naming the fields origin, a nonce, the SRI line and the report endpoint', () => {
    const policy = pagePolicyFor(
      { fieldsOrigin: 'https://fields.example', tesseraJsIntegrity: 'sha384-xyz' },
      operatorOf('shop'),
      'shop',
      'test',
    );
    expect(policy.headers['Content-Security-Policy']).toContain("script-src 'nonce-{NONCE}' https://fields.example");
    expect(policy.headers['Content-Security-Policy']).toContain('frame-src https://fields.example');
    expect(policy.headers['Content-Security-Policy']).toContain('report-uri https://fields.example/v1/browser/csp-reports?key=tpk_test_…');
    expect(policy.headers['Reporting-Endpoints']).toBe('tessera-csp="https://fields.example/v1/browser/csp-reports?key=tpk_test_…"');
    expect(policy.scriptTag).toBe(
      '<script src="https://fields.example/js/v1/tessera.js" integrity="sha384-xyz" crossorigin="anonymous" nonce="{NONCE}"></script>',
    );
    expect(() => pagePolicyFor({ fieldsOrigin: undefined, tesseraJsIntegrity: undefined }, undefined, 'shop', 'test')).toThrow(
      /FIELDS_ORIGIN/,
    );
  });
});

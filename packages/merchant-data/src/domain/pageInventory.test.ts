import {
  applyPageReport,
  applyViolation,
  PAGE_INVENTORY_LIMITS,
  pageIdOf,
  parseCspReports,
  parsePageReport,
  redactUrl,
  type ScriptRecord,
} from './pageInventory';

const ORIGIN = 'https://shop.example';
const T0 = new Date('2026-11-26T10:00:00Z');
const T1 = new Date('2026-11-26T11:00:00Z');
const SHA_A = 'sha256-' + 'A'.repeat(43) + '=';
const SRI = 'sha384-' + 'C'.repeat(64);

const aReport = (overrides: Record<string, unknown> = {}) => ({
  page: `${ORIGIN}/checkout?order=1234#pay`,
  scripts: [{ src: 'https://fields.test/js/v1/tessera.js', integrity: SRI }, { sha256: 'A'.repeat(43) + '=' }],
  csp: ["script-src 'nonce-x' https://fields.test"],
  ...overrides,
});

describe('the page inventory rules (PCI DSS 6.4.3, 11.6.1)', () => {
  it('keeps origin and path of the page, never its query or fragment, and refuses a page of another origin', () => {
    const report = parsePageReport(aReport(), ORIGIN);
    expect(report).toMatchObject({ origin: ORIGIN, path: '/checkout', metaPolicy: "script-src 'nonce-x' https://fields.test" });
    expect(report.scripts).toEqual([
      { key: 'https://fields.test/js/v1/tessera.js', url: 'https://fields.test/js/v1/tessera.js', hash: SRI, hashSource: 'integrity' },
      { key: `inline:${SHA_A}`, url: null, hash: SHA_A, hashSource: 'inline' },
    ]);
    expect(() => parsePageReport(aReport({ page: 'https://evil.example/checkout' }), ORIGIN)).toThrow(/origin/);
    expect(() => parsePageReport([], ORIGIN)).toThrow(/JSON object/);
  });

  it('removes secret-looking query values, fragments and card numbers from script URLs', () => {
    expect(redactUrl('https://cdn.example/a.js?v=3&api_key=sk_live_1&token=t#frag')).toBe(
      'https://cdn.example/a.js?v=3&api_key=redacted&token=redacted',
    );
    expect(redactUrl('https://cdn.example/a.js?pan=4242424242424242')).not.toContain('4242424242424242');
    expect(redactUrl('inline')).toBe('inline');
  });

  it('records a first report as one event, then a new script, a changed hash and a removed script', () => {
    const first = applyPageReport({ page: undefined, scripts: new Map() }, parsePageReport(aReport(), ORIGIN), T0);
    expect(first.page).toMatchObject({ id: pageIdOf(ORIGIN, '/checkout'), firstSeenAt: T0.toISOString(), reports: 1 });
    expect(first.events.map((e) => e.kind)).toEqual(['page_first_seen']);
    const scripts = new Map<string, ScriptRecord>(first.scripts.map((s) => [s.key, s]));

    const second = applyPageReport(
      { page: first.page, scripts },
      parsePageReport(
        aReport({
          scripts: [
            { src: 'https://fields.test/js/v1/tessera.js', integrity: 'sha384-' + 'D'.repeat(64) },
            { src: 'https://evil.example/skim.js' },
          ],
          csp: ["script-src 'nonce-x' https://fields.test 'unsafe-inline' https://evil.example"],
        }),
        ORIGIN,
      ),
      T1,
    );
    expect(second.events.map((e) => e.kind).sort()).toEqual(['policy_weakened', 'script_added', 'script_changed', 'script_removed']);
    const byKey = new Map(second.scripts.map((s) => [s.key, s]));
    expect(byKey.get('https://fields.test/js/v1/tessera.js')).toMatchObject({
      previousHash: SRI,
      changedAt: T1.toISOString(),
      firstSeenAt: T0.toISOString(),
    });
    expect(byKey.get('https://evil.example/skim.js')).toMatchObject({ hash: null, hashSource: 'none', present: true });
    expect(byKey.get(`inline:${SHA_A}`)).toMatchObject({ present: false });
    expect(second.page.firstPolicy).toBe("script-src 'nonce-x' https://fields.test");
  });

  it('lists no more scripts per page than the cap, and says so once', () => {
    const many = Array.from({ length: PAGE_INVENTORY_LIMITS.scriptsPerPage + 5 }, (_, i) => ({ src: `https://cdn.example/${i}.js` }));
    const first = applyPageReport({ page: undefined, scripts: new Map() }, parsePageReport(aReport({ scripts: many }), ORIGIN), T0);
    expect(first.scripts).toHaveLength(PAGE_INVENTORY_LIMITS.scriptsPerPage);
    expect(first.page.scriptsCapped).toBe(true);
    expect(first.events.filter((e) => e.kind === 'scripts_capped')).toHaveLength(1);
  });

  it('reads both CSP report formats, drops script samples and keeps the enforced policy as the header policy', () => {
    const legacy = parseCspReports(
      'csp-report',
      {
        'csp-report': {
          'document-uri': `${ORIGIN}/checkout?session=abc`,
          'blocked-uri': 'https://evil.example/x.js?token=abc',
          'effective-directive': 'script-src-elem',
          'original-policy': "script-src 'self'",
          'script-sample': '4242424242424242',
          'line-number': 3,
        },
      },
      T0,
    );
    expect(legacy).toEqual([
      {
        origin: ORIGIN,
        path: '/checkout',
        originalPolicy: "script-src 'self'",
        violation: {
          at: T0.toISOString(),
          documentUrl: `${ORIGIN}/checkout`,
          blockedUrl: 'https://evil.example/x.js?token=redacted',
          directive: 'script-src-elem',
          disposition: 'enforce',
          sourceFile: null,
          line: 3,
        },
      },
    ]);
    expect(JSON.stringify(legacy)).not.toContain('4242');
    const reporting = parseCspReports(
      'reports+json',
      [
        {
          type: 'csp-violation',
          body: { documentURL: `${ORIGIN}/checkout`, blockedURL: 'inline', effectiveDirective: 'script-src-elem', disposition: 'report' },
        },
        { type: 'deprecation', body: {} },
      ],
      T0,
    );
    expect(reporting.map((r) => r.violation)).toMatchObject([{ blockedUrl: 'inline', disposition: 'report' }]);
    const page = applyViolation(undefined, legacy[0]!, T0).page;
    expect(page).toMatchObject({ headerPolicy: "script-src 'self'", reports: 0 });
    expect(applyViolation(page, { ...legacy[0]!, originalPolicy: 'img-src *' }, T1).events.map((e) => e.kind)).toEqual(['policy_weakened']);
  });
});

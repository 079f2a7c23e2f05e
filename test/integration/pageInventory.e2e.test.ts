/**
 * The SAQ A kit in a real browser (Debian's chromium driven by playwright-core): a merchant's
 * payment page loads tessera.js, which reports the page's scripts and meta CSP to the fields
 * service; a second load adds a script and weakens the policy; a page whose header CSP blocks a
 * script sends a violation report. The dashboard's Payment pages page flags the page, an operator
 * authorizes a script with a justification, and the evidence export holds it. Nothing stored
 * holds the card number the pages carry in their URL and inputs.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { Redis } from 'ioredis';
import type { Browser, Page } from 'playwright-core';
import { collectPageProblems, launchChromium, SCREENSHOTS, tesseraJsIntegrity } from './browser';
import { startRedis, startStack, type RedisServer, type Stack } from './harness';

jest.setTimeout(180_000);

const OPERATOR = { email: 'ops@shop.test', password: 'correct-horse-battery' };
const PAN = '4242424242424242';
const NONCE = 'bm9uY2Utb2YtdGhlLXRlc3Q';

let redis: RedisServer;
let stack: Stack;
let browser: Browser;
let fieldsOrigin = '';
let publishableKey = '';
/** The merchant's site: its checkout in two versions, a page with a header CSP, and its scripts. */
let site: { origin: string; close(): Promise<void> };
/** A third party's origin (a tag manager, or a skimmer), serving one script. */
let thirdParty: { origin: string; close(): Promise<void> };
let version = 1;

type Answer = { status?: number; headers?: Record<string, string>; body: string; type?: string };

async function serve(respond: (url: string) => Answer): Promise<{ origin: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const answer = respond(req.url ?? '/');
    res.writeHead(answer.status ?? 200, { 'content-type': answer.type ?? 'text/html; charset=utf-8', ...(answer.headers ?? {}) });
    res.end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Version 1: a strict meta policy (nonce), tessera.js with SRI, an inline and a same-origin script. Version 2 adds a third-party tag and weakens the policy. */
function checkout(): string {
  const strict = `script-src 'nonce-${NONCE}' 'self' ${fieldsOrigin}; frame-src ${fieldsOrigin}; connect-src 'self' ${fieldsOrigin}`;
  const weaker = `script-src 'self' 'unsafe-inline' ${fieldsOrigin} ${thirdParty.origin}; frame-src *; connect-src 'self' ${fieldsOrigin}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Checkout</title>
<meta http-equiv="Content-Security-Policy" content="${version === 1 ? strict : weaker}">
</head><body><main>
<h1>Checkout</h1>
<label for="note">Order note</label> <input id="note" value="">
<div id="card"></div>
</main>
<script nonce="${NONCE}" src="/app.js"></script>
<script nonce="${NONCE}" src="${fieldsOrigin}/js/v1/tessera.js" integrity="${tesseraJsIntegrity()}" crossorigin="anonymous"></script>
<script nonce="${NONCE}">
document.getElementById('note').value = ${JSON.stringify(PAN)};
Tessera(${JSON.stringify(publishableKey)}).cardFields({ container: '#card' });
${
  version === 2
    ? `window.addEventListener('load', function () {
  setTimeout(function () { var s = document.createElement('script'); s.src = ${JSON.stringify(`${thirdParty.origin}/tag.js?v=3&token=secret-${PAN}`)}; document.body.appendChild(s); }, 100);
});`
    : ''
}
</script>
</body></html>`;
}

/** A page whose response header policy blocks its own inline script and reports it to Tessera (report-uri). */
function violating(): Answer {
  const report = `${fieldsOrigin}/v1/browser/csp-reports?key=${publishableKey}`;
  return {
    headers: { 'content-security-policy': `script-src 'self' ${fieldsOrigin}; report-uri ${report}` },
    body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Blocked</title></head><body><main><h1>Blocked</h1></main>
<script>document.title = 'ran';</script></body></html>`,
  };
}

async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** The admin API as the signed-in dashboard page calls it (its session cookie, same origin). */
async function adminGet(page: Page, apiPath: string): Promise<{ status: number; type: string | null; text: string }> {
  return page.evaluate(async (url: string) => {
    const res = await fetch(url, { credentials: 'same-origin' });
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  }, `/admin/v1${apiPath}`);
}

async function inventory(page: Page): Promise<any> {
  return JSON.parse((await adminGet(page, '/merchants/shop/page-inventory?mode=test')).text);
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

beforeAll(async () => {
  redis = await startRedis();
  stack = await startStack(redis);
  fieldsOrigin = stack.fieldsUrl;
  thirdParty = await serve((url) =>
    url.startsWith('/tag.js') ? { type: 'text/javascript', body: 'window.tagLoaded = true;' } : { status: 404, body: 'no' },
  );
  site = await serve((url) => {
    if (url === '/app.js') return { type: 'text/javascript', body: 'window.appLoaded = true;' };
    if (url.startsWith('/blocked')) return violating();
    if (url.startsWith('/quiet')) {
      return {
        body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Quiet</title></head><body><main><div id="card"></div></main>
<script src="${fieldsOrigin}/js/v1/tessera.js"></script>
<script>Tessera(${JSON.stringify(publishableKey)}, { pageReport: false }).cardFields({ container: '#card' }); window.mounted = true;</script></body></html>`,
      };
    }
    return { body: checkout() };
  });
  publishableKey = (
    JSON.parse(
      stack
        .cli(['create', '--kind', 'publishable', '--merchant', 'shop', '--mode', 'test', '--json', '--origin', site.origin])
        .trim()
        .split('\n')
        .pop() ?? '',
    ) as { apiKey: string }
  ).apiKey;
  stack.createOperator(OPERATOR.email, OPERATOR.password, 'shop');
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await site?.close();
  await thirdParty?.close();
  await stack?.stop();
  await redis?.stop();
});

describe('the SAQ A kit: payment-page script inventory, tamper detection and evidence', () => {
  let dashboard: Page;
  let problems: string[] = [];
  let pageId = '';

  beforeAll(async () => {
    const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
    dashboard = await context.newPage();
    problems = collectPageProblems(dashboard, /status of 40[013]/);
    await dashboard.goto(`${stack.adminUrl}/dashboard/`);
    await dashboard.getByLabel('Email').fill(OPERATOR.email);
    await dashboard.getByLabel('Password').fill(OPERATOR.password);
    await dashboard.getByRole('button', { name: 'Sign in' }).click();
    await dashboard.locator('#app-view').waitFor({ state: 'visible' });
  });

  it('records the scripts of a first load: tessera.js by its SRI hash, the inline and same-origin scripts by SHA-256', async () => {
    const shopper = await browser.newPage();
    await shopper.goto(`${site.origin}/checkout?order=77&pan=${PAN}`);
    await shopper.frameLocator('iframe').locator('input').first().waitFor();
    const page = await waitFor('the first report', async () => (await inventory(dashboard)).pages[0]);
    pageId = page.id;
    expect(page).toMatchObject({
      url: `${site.origin}/checkout`,
      flagged: true,
      flags: { newScripts: 3, changedScripts: 0, policyWeakened: false },
    });
    const byUrl = new Map(page.scripts.map((s: any) => [s.url ?? 'inline', s]));
    expect(byUrl.get(`${fieldsOrigin}/js/v1/tessera.js`)).toMatchObject({
      hash: tesseraJsIntegrity(),
      hashSource: 'integrity',
      status: 'new',
    });
    expect(byUrl.get(`${site.origin}/app.js`)).toMatchObject({ hashSource: 'fetched', hash: expect.stringMatching(/^sha256-/) });
    expect(byUrl.get('inline')).toMatchObject({ inline: true, hashSource: 'inline' });
    await shopper.close();
  });

  it('flags a second load that adds a third-party script and weakens the meta policy', async () => {
    version = 2;
    const shopper = await browser.newPage();
    await shopper.goto(`${site.origin}/checkout`);
    await shopper.waitForFunction(() => (globalThis as any).tagLoaded === true);
    const page = await waitFor('the added script', async () => {
      const found = (await inventory(dashboard)).pages.find((p: any) => p.id === pageId);
      return found?.scripts.some((s: any) => s.url?.startsWith(`${thirdParty.origin}/tag.js`)) ? found : undefined;
    });
    expect(page.flags.policyWeakened).toBe(true);
    expect(page.policyWeakenings.join(' ')).toMatch(/unsafe-inline/);
    const tag = page.scripts.find((s: any) => s.url?.startsWith(`${thirdParty.origin}/tag.js`));
    // A cross-origin script without integrity cannot be hashed; its token is never kept.
    expect(tag).toMatchObject({ url: `${thirdParty.origin}/tag.js?v=3&token=redacted`, unhashable: true, status: 'new' });
    expect(page.events.map((e: any) => e.kind)).toEqual(expect.arrayContaining(['policy_weakened', 'script_added']));
    await shopper.close();
  });

  it('lists a CSP violation the page’s header policy reports to Tessera', async () => {
    const shopper = await browser.newPage();
    await shopper.goto(`${site.origin}/blocked?session=abc`);
    const blocked = await waitFor('the violation report', async () =>
      (await inventory(dashboard)).pages.find((p: any) => p.url === `${site.origin}/blocked` && p.violations.length > 0),
    );
    expect(blocked.violations[0]).toMatchObject({
      documentUrl: `${site.origin}/blocked`,
      blockedUrl: 'inline',
      directive: 'script-src-elem',
    });
    expect(blocked.headerPolicy).toContain(`script-src 'self' ${fieldsOrigin}`);
    await shopper.close();
  });

  it('reports nothing from a page that turns the reporter off', async () => {
    const shopper = await browser.newPage();
    await shopper.goto(`${site.origin}/quiet`);
    await shopper.frameLocator('iframe').locator('input').first().waitFor();
    // The reporter waits for the load event; give a report time to arrive, had one been sent.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await inventory(dashboard)).pages.map((p: any) => p.url)).not.toContain(`${site.origin}/quiet`);
    await shopper.close();
  });

  it('shows the page flagged on the dashboard, authorizes a script with a justification, and passes axe', async () => {
    await dashboard.goto(`${stack.adminUrl}/dashboard/#pages`);
    await dashboard.locator('#pages-view').waitFor({ state: 'visible' });
    const entry = dashboard.locator(`[data-page-id="${pageId}"]`);
    await entry.waitFor();
    await expect(entry.locator('.badge', { hasText: 'Needs review' }).first().isVisible()).resolves.toBe(true);
    expect(await dashboard.locator('#page-policy-headers').textContent()).toContain(`frame-src ${fieldsOrigin}`);
    expect(await dashboard.locator('#page-policy-script').textContent()).toContain(`integrity="${tesseraJsIntegrity()}"`);
    await screenshot(dashboard, 'page-inventory-flagged');

    const axe = await new AxeBuilder({ page: dashboard }).include('#pages-view').analyze();
    expect(axe.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);

    await entry.getByRole('button', { name: `Authorize ${fieldsOrigin}/js/v1/tessera.js` }).click();
    await dashboard.getByLabel('Justification').fill('Tessera card fields: collects the card in its own iframe');
    const dialogAxe = await new AxeBuilder({ page: dashboard }).include('#authorize-dialog').analyze();
    expect(dialogAxe.violations.map((v) => v.id)).toEqual([]);
    await dashboard.getByRole('button', { name: 'Authorize script' }).click();
    const row = entry.locator('tr', { hasText: `${fieldsOrigin}/js/v1/tessera.js` });
    await row.locator('.badge', { hasText: 'Authorized' }).waitFor();
    await screenshot(dashboard, 'page-inventory-authorized');
    expect(problems).toEqual([]);
  });

  it('exports the evidence as JSON and CSV with the authorization and its justification', async () => {
    const json = await adminGet(dashboard, '/merchants/shop/page-inventory/export?mode=test&format=json');
    expect(json.status).toBe(200);
    const evidence = JSON.parse(json.text);
    const exported = evidence.pages.find((p: any) => p.id === pageId);
    expect(exported.scripts.find((s: any) => s.url === `${fieldsOrigin}/js/v1/tessera.js`)).toMatchObject({
      status: 'authorized',
      authorization: { by: OPERATOR.email, justification: 'Tessera card fields: collects the card in its own iframe' },
    });
    const csv = await adminGet(dashboard, '/merchants/shop/page-inventory/export?mode=test&format=csv');
    expect(csv.type).toMatch(/^text\/csv/);
    expect(csv.text).toContain(
      `${site.origin}/checkout,${fieldsOrigin}/js/v1/tessera.js,false,${tesseraJsIntegrity()},integrity,authorized`,
    );
  });

  it('keeps no card number anywhere in what the pages reported', async () => {
    const client = new Redis(redis.url);
    try {
      const keys = [...(await client.keys('tessera:page-inventory:*')), ...(await client.keys('tessera:page-authorizations:*'))];
      expect(keys.length).toBeGreaterThan(3);
      const dump: string[] = [];
      for (const key of keys) {
        const type = await client.type(key);
        if (type === 'hash') dump.push(JSON.stringify(await client.hgetall(key)));
        else if (type === 'list') dump.push(JSON.stringify(await client.lrange(key, 0, -1)));
      }
      const text = dump.join('\n');
      expect(text).toContain('/checkout');
      expect(text).not.toContain(PAN);
      expect(text).not.toContain('order=77');
      expect(text).not.toContain('session=abc');
    } finally {
      client.disconnect();
    }
  });
});

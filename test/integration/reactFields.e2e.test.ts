/**
 * Issue 26, item 4: @tessera/react in a real browser. A merchant's React checkout
 * (react/checkoutApp.tsx, bundled here with esbuild against the built package, React's development
 * build under StrictMode) on a loopback origin its publishable key allows, and the same app on one
 * it does not. The components drive tessera.js' lifecycle; these tests watch the iframes they leave.
 */
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import * as esbuild from 'esbuild';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { collectPageProblems, launchChromium, SCREENSHOTS, startMerchantSite, tesseraJsIntegrity, type MerchantSite } from './browser';
import { apiClient, findCardDataInLogs, ROOT, startRedis, startStack, TEST_CARDS, type RedisServer, type Stack } from './harness';

jest.setTimeout(180_000);

/** The page's globals, for functions evaluated inside the browser (tests compile without the DOM lib). */
declare const window: any;
declare const document: any;

const APP = path.join(__dirname, 'react', 'checkoutApp.tsx');
const PAN = TEST_CARDS.visa;
const CVC = '987';
/** A leading zero, so neither a log scan nor a DOM scan can mistake another number for it. */
const STORED_CARD_CVC = '073';
const EXPIRY_YEAR = new Date().getUTCFullYear() + 4;
const EXPIRY_TYPED = `12${String(EXPIRY_YEAR).slice(2)}`;
const CARD_FRAME = '/fields/v1/card';

let redis: RedisServer;
let stack: Stack;
let browser: Browser;
let context: BrowserContext;
let allowed: MerchantSite;
let disallowed: MerchantSite;
let bundle = '';
let integrity = '';
let publishableKey = '';
let asMerchant: ReturnType<typeof apiClient>;

interface PageConfig {
  view: 'card' | 'cvc';
  publishableKey?: string;
  integrity?: string;
  initialStyle?: unknown;
  cvcSession?: unknown;
}

/** The merchant's HTML: a root for React, the page's settings, and the bundled app. */
function appPage(config: PageConfig): string {
  const settings = { publishableKey, fieldsOrigin: stack.fieldsUrl, integrity, ...config };
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>React checkout</title>
<style>body{font-family:system-ui,sans-serif;max-width:520px;margin:24px auto;padding:0 12px}#card,#cvc{margin:16px 0}</style>
</head><body><div id="root"></div>
<script>window.tesseraPage = ${JSON.stringify(settings)};</script>
<script src="/app.js"></script>
</body></html>`;
}

/** A merchant's site: the bundle at /app.js; at any other path the app, set up by `configFor(path)`. */
function merchantSite(configFor: (url: string) => PageConfig): Promise<MerchantSite> {
  return startMerchantSite((url) => (url === '/app.js' ? { contentType: 'text/javascript', body: bundle } : appPage(configFor(url))));
}

const configs = new Map<string, PageConfig>();

beforeAll(async () => {
  // The app against the built @tessera/react (dist, as a merchant installs it), with React's
  // development build: StrictMode runs each effect, its cleanup and the effect again only there.
  const built = await esbuild.build({
    entryPoints: [APP],
    bundle: true,
    write: false,
    format: 'iife',
    target: 'es2020',
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"development"' },
    logLevel: 'silent',
    absWorkingDir: ROOT,
  });
  bundle = built.outputFiles[0]!.text;
  integrity = tesseraJsIntegrity();

  const view = (url: string): PageConfig => configs.get(url) ?? { view: 'card' };
  allowed = await merchantSite(view);
  disallowed = await merchantSite(view);
  redis = await startRedis();
  stack = await startStack(redis);
  const args = ['create', '--kind', 'publishable', '--merchant', 'shop', '--mode', 'test', '--json', '--origin', allowed.origin];
  publishableKey = (JSON.parse(stack.cli(args).trim().split('\n').pop() ?? '') as { apiKey: string }).apiKey;
  asMerchant = apiClient(stack, stack.createKey('shop').apiKey);
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 720, height: 720 } });
});

afterAll(async () => {
  await browser?.close();
  await allowed?.close();
  await disallowed?.close();
  await stack?.stop();
  await redis?.stop();
  await esbuild.stop();
});

const cardIframes = (page: Page): Promise<number> =>
  page.evaluate((src) => document.querySelectorAll(`iframe[src*="${src}"]`).length, CARD_FRAME);
const eventsOf = (page: Page, type: string): Promise<any[]> => page.evaluate((t) => window.events.filter((e: any) => e.type === t), type);

async function waitForEvent(page: Page, type: string, count = 1): Promise<void> {
  await page.waitForFunction(
    ({ t, n }) => window.events.filter((e: any) => e.type === t).length >= n,
    { t: type, n: count },
    {
      timeout: 30_000,
    },
  );
}

function cardFrame(page: Page): Frame {
  const frame = page.frames().find((f) => f.url().startsWith(`${stack.fieldsUrl}${CARD_FRAME}`));
  if (!frame) throw new Error('card fields frame not found');
  return frame;
}

describe('TesseraProvider', () => {
  it('loads tessera.js from the fields origin with its SRI hash, and useTessera() gives the instance', async () => {
    const page = await context.newPage();
    const problems = collectPageProblems(page, /^$/);
    await page.goto(allowed.origin);
    await page.waitForFunction(() => window.providerSaw !== undefined, undefined, { timeout: 30_000 });
    expect(await page.evaluate(() => window.providerSaw)).toBe('function');
    const scripts = await page.evaluate(() =>
      [...document.querySelectorAll('script[src*="tessera.js"]')].map((s: any) => ({
        src: s.src,
        integrity: s.integrity,
        crossOrigin: s.crossOrigin,
      })),
    );
    expect(scripts).toEqual([{ src: `${stack.fieldsUrl}/js/v1/tessera.js`, integrity, crossOrigin: 'anonymous' }]);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('reports a tessera.js whose hash does not match through onLoadError, and mounts nothing', async () => {
    const wrong = integrity.replace(/^sha384-./, (prefix) => `sha384-${prefix.endsWith('A') ? 'B' : 'A'}`);
    configs.set('/wrong-hash', { view: 'card', integrity: wrong });
    const page = await context.newPage();
    await page.goto(`${allowed.origin}/wrong-hash`);
    await page.waitForFunction(() => window.loadError !== undefined, undefined, { timeout: 30_000 });
    expect(await page.evaluate(() => window.loadError)).toMatch(/could not load .*tessera\.js/);
    expect(await page.evaluate(() => window.providerSaw)).toBeUndefined();
    expect(await cardIframes(page)).toBe(0);
    await page.close();
  });

  it('reports a secret key through onLoadError before anything is framed', async () => {
    configs.set('/secret-key', { view: 'card', publishableKey: stack.createKey('shop').apiKey });
    const page = await context.newPage();
    await page.goto(`${allowed.origin}/secret-key`);
    await page.waitForFunction(() => window.loadError !== undefined, undefined, { timeout: 30_000 });
    expect(await page.evaluate(() => window.loadError)).toMatch(/secret key/);
    expect(await cardIframes(page)).toBe(0);
    expect(
      await page.evaluate(() =>
        window.harness.tokenize().then(
          () => 'resolved',
          (e: any) => e.code,
        ),
      ),
    ).toBe('fields_not_ready');
    await page.close();
  });
});

describe('CardFields on a page the key allows, under StrictMode', () => {
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    page = await context.newPage();
    problems = collectPageProblems(page, /^$/);
    await page.goto(allowed.origin);
    await waitForEvent(page, 'ready');
  });

  afterAll(async () => {
    await page.close();
  });

  it('mounts exactly one iframe although React ran the effects twice', async () => {
    // StrictMode's development checks are on: the app's own mount effect ran, was cleaned up and ran again.
    expect(await page.evaluate(() => window.strictEffectRuns)).toBe(2);
    expect(await cardIframes(page)).toBe(1);
    expect(await page.locator('#card iframe').getAttribute('title')).toBe('Card details');
    await page.waitForTimeout(300);
    expect(await eventsOf(page, 'ready')).toHaveLength(1);
    expect(await cardIframes(page)).toBe(1);
  });

  it('has no accessibility violation (axe-core)', async () => {
    const results = await new AxeBuilder({ page }).analyze();
    expect(results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
  });

  it('raises onSubmit when the shopper presses Enter in the fields', async () => {
    await cardFrame(page).getByLabel('Card number').press('Enter');
    await waitForEvent(page, 'submit');
  });

  it('tokenizes a test card typed into the iframe through the ref', async () => {
    const frame = cardFrame(page);
    await frame.getByLabel('Card number').pressSequentially(PAN);
    await frame.getByLabel('Expiry date (MM / YY)').pressSequentially(EXPIRY_TYPED);
    await frame.getByLabel('Security code').pressSequentially(CVC);
    await page.waitForFunction(() => [...window.events].reverse().find((e: any) => e.type === 'change')?.complete === true);
    await expect(page.locator('#pay').isEnabled()).resolves.toBe(true);
    await page.locator('main').screenshot({ path: path.join(SCREENSHOTS, 'react-card-fields.png') });
    const result = await page.evaluate(() => window.harness.tokenize());
    expect(result).toEqual({
      token: expect.stringMatching(/^tok\./),
      card: { brand: 'visa', last4: '4242', expiryMonth: 12, expiryYear: EXPIRY_YEAR },
    });
    expect((await asMerchant('GET', `/v1/token/${result.token}`)).body).toMatchObject({ last4: '4242', provisional: true });
    // The page's own button, through the same ref.
    await page.locator('#pay').click();
    await page.getByRole('status').getByText('Card ending 4242 saved').waitFor();
  });

  it('passes a changed prop to update(): same iframe, only what changed, nothing for an equal inline object', async () => {
    await page.evaluate(() => {
      document.querySelector('#card iframe').dataset.firstFrame = 'yes';
      const fields = window.harness.cardFields();
      const update = fields.update;
      window.updates = [];
      fields.update = (changes: unknown) => {
        window.updates.push(changes);
        return update(changes);
      };
    });
    // A re-render makes a new options object with the same values: no update.
    await page.evaluate(() => window.harness.rerender());
    await page.waitForTimeout(100);
    expect(await page.evaluate(() => window.updates)).toEqual([]);
    await page.evaluate(() => window.harness.setTitle('Payment card'));
    await page.waitForFunction(() => document.querySelector('#card iframe').title === 'Payment card');
    await page.evaluate(() => window.harness.setHolderName(true));
    await cardFrame(page).getByLabel('Name on card').waitFor();
    expect(await page.evaluate(() => window.updates)).toEqual([{ title: 'Payment card' }, { holderName: true }]);
    expect(await page.evaluate(() => [...document.querySelectorAll('iframe')].map((f: any) => f.dataset.firstFrame))).toEqual(['yes']);
    // What the shopper typed stays: still complete, still tokenizes.
    expect(await page.evaluate(() => window.harness.tokenize())).toMatchObject({ card: { last4: '4242' } });
  });

  it('removes the iframe when the component unmounts, destroys the fields, and mounts one again when it is back', async () => {
    await page.evaluate(() => {
      window.oldFields = window.harness.cardFields();
      window.harness.setCardShown(false);
    });
    await page.waitForFunction(() => document.querySelectorAll('iframe').length === 0);
    await page.waitForTimeout(100);
    const afterUnmount = await page.evaluate(() =>
      window.oldFields.tokenize().then(
        () => 'resolved',
        (e: any) => e.code,
      ),
    );
    expect(afterUnmount).toBe('destroyed');
    const readyBefore = (await eventsOf(page, 'ready')).length;
    await page.evaluate(() => window.harness.setCardShown(true));
    await waitForEvent(page, 'ready', readyBefore + 1);
    expect(await cardIframes(page)).toBe(1);
    expect(await page.evaluate(() => window.harness.cardFields() === window.oldFields)).toBe(false);
  });

  it('never hands the page the card number or CVC, and the page had no errors', async () => {
    const seen = JSON.stringify(await page.evaluate(() => ({ events: window.events, html: document.documentElement.outerHTML })));
    expect(seen.replace(/tok\.[A-Za-z0-9_-]+/g, 'tok.')).not.toMatch(new RegExp(`${PAN}|${CVC}`));
    expect(problems).toEqual([]);
  });
});

describe('CardFields with options tessera.js refuses', () => {
  it('reports invalid_style through onError instead of failing the render, and mounts once the style is fixed', async () => {
    configs.set('/bad-style', { view: 'card', initialStyle: { base: { color: 'url(https://evil.example/x)' } } });
    const page = await context.newPage();
    const problems = collectPageProblems(page, /^$/);
    await page.goto(`${allowed.origin}/bad-style`);
    await waitForEvent(page, 'error');
    expect(await eventsOf(page, 'error')).toEqual([
      { type: 'error', code: 'invalid_style', errorType: 'integration_error', message: expect.any(String) },
    ]);
    expect(await cardIframes(page)).toBe(0);
    // The rest of the checkout still renders.
    expect(await page.locator('#pay').count()).toBe(1);
    await page.evaluate(() => window.harness.setStyle({ base: { color: '#1a1a1a' } }));
    await waitForEvent(page, 'ready');
    expect(await cardIframes(page)).toBe(1);
    expect(problems).toEqual([]);
    await page.close();
  });
});

describe('CardFields on a page the key does not allow', () => {
  it('calls onError with origin_not_allowed, and tokenize() through the ref rejects with it', async () => {
    const page = await context.newPage();
    await page.goto(disallowed.origin);
    await waitForEvent(page, 'error');
    const refused = 'origin_not_allowed';
    expect(await eventsOf(page, 'error')).toEqual([
      { type: 'error', code: refused, errorType: 'integration_error', message: expect.any(String) },
    ]);
    expect(await eventsOf(page, 'ready')).toEqual([]);
    const rejected = await page.evaluate(() =>
      window.harness.tokenize().then(
        () => 'resolved',
        (e: any) => ({ code: e.code, type: e.type }),
      ),
    );
    expect(rejected).toEqual({ code: refused, type: 'integration_error' });
    // The frame tells the shopper, and the page with it still passes axe.
    const results = await new AxeBuilder({ page }).analyze();
    expect(results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
    await page.close();
  });
});

describe('CvcField', () => {
  it('re-collects the CVC of a stored card under a session the server opened (submit() through the ref), and makes a new field for a new session', async () => {
    const created = await asMerchant('POST', '/v1/token', { number: PAN, expiryMonth: 12, expiryYear: EXPIRY_YEAR });
    expect(created.status).toBe(201);
    const token = created.body.token as string;
    const opened = await asMerchant('POST', `/v1/token/${token}/cvc-sessions`);
    expect(opened.status).toBe(201);
    configs.set('/cvc', { view: 'cvc', cvcSession: opened.body });

    const page = await context.newPage();
    const problems = collectPageProblems(page, /^$/);
    await page.goto(`${allowed.origin}/cvc`);
    await waitForEvent(page, 'ready');
    expect(await cardIframes(page)).toBe(1);
    expect(await page.locator('#cvc iframe').getAttribute('title')).toBe('Security code');
    const frame = cardFrame(page);
    await frame.getByLabel('Security code').pressSequentially(STORED_CARD_CVC);
    await page.waitForFunction(() => [...window.events].reverse().find((e: any) => e.type === 'change')?.complete === true);
    expect(await page.evaluate(() => window.harness.submitCvc())).toEqual({ token });
    expect((await asMerchant('GET', `/v1/token/${token}`)).body.cvvAvailable).toBe(true);
    expect(await page.evaluate(() => document.documentElement.outerHTML)).not.toContain(STORED_CARD_CVC);

    // The session is single use: the page's server opens another, and the component makes a new field for it.
    const again = await asMerchant('POST', `/v1/token/${token}/cvc-sessions`);
    expect(again.status).toBe(201);
    await page.evaluate((session) => {
      window.firstField = window.harness.cvcField();
      window.harness.setCvcSession(session);
    }, again.body);
    await waitForEvent(page, 'ready', 2);
    expect(await cardIframes(page)).toBe(1);
    expect(await page.evaluate(() => window.harness.cvcField() !== window.firstField)).toBe(true);
    expect(
      await page.evaluate(() =>
        window.firstField.submit().then(
          () => 'resolved',
          (e: any) => e.code,
        ),
      ),
    ).toBe('destroyed');
    // The first field's events are history: wait for the new one's.
    await page.evaluate(() => (window.events = []));
    await cardFrame(page).getByLabel('Security code').pressSequentially(STORED_CARD_CVC);
    await page.waitForFunction(() => [...window.events].reverse().find((e: any) => e.type === 'change')?.complete === true);
    expect(await page.evaluate(() => window.harness.submitCvc())).toEqual({ token });
    expect(problems).toEqual([]);
    await page.close();
  });
});

it('no card number or CVC appears in any service log', () => {
  expect(findCardDataInLogs(stack.logs(), [PAN], [CVC, STORED_CARD_CVC])).toEqual([]);
});

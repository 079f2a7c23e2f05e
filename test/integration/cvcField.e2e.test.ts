/**
 * Issue 15, item 4: the CVC-only field of tessera.js in a real browser. A returning shopper's card
 * is stored (a token without CVV); the merchant's server opens a CVC session for it (issue 22), its
 * checkout frames `tessera.cvcField({ cvcSession })`, the shopper types the CVC, and the next proxy
 * call renders it once. The merchant page's own DOM,
 * messages and network never hold the digits: it installs the hooks a skimming script would.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page, Request as BrowserRequest } from 'playwright-core';
import { launchChromium, SCREENSHOTS, SKIMMER_HOOKS, startMerchantSite, type MerchantSite } from './browser';
import {
  apiClient,
  findCardDataInLogs,
  PspRecorder,
  ROOT,
  startRedis,
  startStack,
  TEST_CARDS,
  type RedisServer,
  type Stack,
} from './harness';

jest.setTimeout(180_000);

/** The page's globals, for functions evaluated inside the browser (tests compile without the DOM lib). */
declare const window: any;
declare const document: any;
declare const Tessera: any;

const MANIFEST = path.join(ROOT, 'packages', 'js', 'dist', 'browser', 'manifest.json');
/** A leading zero, so neither a log scan nor a DOM scan can mistake another number for it. */
const CVC = '073';

let redis: RedisServer;
let stack: Stack;
let psp: PspRecorder;
let browser: Browser;
let fieldsOrigin = '';
let merchant: MerchantSite;
let asMerchant: ReturnType<typeof apiClient>;
let token = '';
/** The merchant page's publishable key. */
let publishableKey = '';
/** The CVC session the merchant's server opened for `token`, as it hands it to the page. */
let cvcSession: unknown;

/** A checkout for a returning shopper: hooks first (as a skimmer would install them), then the CVC-only field. */
function checkoutPage(key: string, integrity: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Pay again</title>
<style>body{font-family:system-ui,sans-serif;max-width:420px;margin:24px auto;padding:0 12px}#cvc{margin:12px 0}</style>
${SKIMMER_HOOKS}
</head><body><main>
<h1>Pay with your Visa ending 4242</h1>
<p>For your security, enter the card's security code again.</p>
<div id="cvc"></div>
<button id="pay" type="button">Pay</button>
</main>
<script src="${fieldsOrigin}/js/v1/tessera.js" integrity="${integrity}" crossorigin="anonymous"></script>
<script>
window.events = [];
var field = Tessera(${JSON.stringify(key)}).cvcField({ cvcSession: ${JSON.stringify(cvcSession)}, container: '#cvc', title: 'Security code' });
['ready', 'change'].forEach(function (name) {
  field.on(name, function (e) { window.events.push(Object.assign({ type: name }, e)); });
});
document.getElementById('pay').addEventListener('click', function () {
  field.submit().then(function (r) { window.result = r; }, function (e) { window.result = { error: e.code }; });
});
</script>
</body></html>`;
}

beforeAll(async () => {
  const integrity = (JSON.parse(fs.readFileSync(MANIFEST, 'utf8')) as Record<string, { integrity: string }>)['tessera.js']!.integrity;
  redis = await startRedis();
  stack = await startStack(redis);
  fieldsOrigin = stack.fieldsUrl;
  psp = await new PspRecorder().start();
  asMerchant = apiClient(stack, stack.createKey('shop').apiKey);
  // The stored card of a returning shopper: its CVV (if any) is long gone.
  const created = await asMerchant('POST', '/v1/token', {
    number: TEST_CARDS.visa,
    expiryMonth: 12,
    expiryYear: new Date().getUTCFullYear() + 3,
  });
  expect(created.status).toBe(201);
  token = created.body.token as string;
  const opened = await asMerchant('POST', `/v1/token/${token}/cvc-sessions`);
  expect(opened.status).toBe(201);
  expect(opened.body).toEqual({ object: 'cvc_session', token, secret: expect.stringMatching(/^cvcs_/), expiresAt: expect.any(String) });
  cvcSession = opened.body;

  let key = '';
  merchant = await startMerchantSite(() => checkoutPage(key, integrity));
  const args = ['create', '--kind', 'publishable', '--merchant', 'shop', '--mode', 'test', '--json', '--origin', merchant.origin];
  key = (JSON.parse(stack.cli(args).trim().split('\n').pop() ?? '') as { apiKey: string }).apiKey;
  publishableKey = key;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await merchant?.close();
  await psp?.stop();
  await stack?.stop();
  await redis?.stop();
});

/** A proxy call asking for the CVC, with the merchant's secret key. */
const chargeWithCvc = () =>
  asMerchant('POST', '/v1/proxy', {
    method: 'post',
    token,
    pspUrl: `${psp.url}/v1/charges`,
    pspHeaders: { 'content-type': 'application/json' },
    pspBody: JSON.stringify({ cvc: '[CARD_CVV]' }),
  });

it('re-collects a CVC into a stored token without the merchant page seeing it; the next render uses it once', async () => {
  const context = await browser.newContext({ viewport: { width: 520, height: 360 } });
  const page: Page = await context.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (err) => pageErrors.push(err.message));
  /** Every request the merchant's own document makes (not the iframe's), with its body. */
  const merchantRequests: string[] = [];
  page.on('request', (request: BrowserRequest) => {
    if (request.frame() === page.mainFrame()) merchantRequests.push(`${request.method()} ${request.url()} ${request.postData() ?? ''}`);
  });
  await page.goto(merchant.origin);
  await page.waitForFunction(() => window.events.some((e: any) => e.type === 'ready'), undefined, { timeout: 30_000 });
  const frame = page.frames().find((f) => f.url().startsWith(`${fieldsOrigin}/fields/v1/card`));
  if (!frame) throw new Error('CVC field frame not found');

  // Only the security code is offered: no number, expiry or name input is visible.
  const visible = await frame.evaluate(() =>
    [...document.querySelectorAll('input')].filter((el: any) => el.offsetParent !== null).map((el: any) => el.id),
  );
  expect(visible).toEqual(['cc-csc']);
  expect((await asMerchant('GET', `/v1/token/${token}`)).body.cvvAvailable).toBe(false);

  await frame.getByLabel('Security code').pressSequentially(CVC);
  await page.waitForFunction(() => [...window.events].reverse().find((e: any) => e.type === 'change')?.complete === true);
  await page.locator('#pay').click();
  await page.waitForFunction(() => window.result !== undefined, undefined, { timeout: 30_000 });
  const result = await page.evaluate(() => window.result);
  // The token alone: the merchant's server, which opened the session, has the card's details.
  expect(result).toEqual({ token });
  await page.screenshot({ path: path.join(SCREENSHOTS, 'cvc-field.png') });

  // What the merchant's page could observe: its DOM, every message and port event, its fetch/XHR
  // bodies and every request its document made. None holds the CVC.
  const observed = await page.evaluate(() => ({
    captured: window.captured as string[],
    html: document.documentElement.outerHTML as string,
  }));
  expect(observed.captured.length).toBeGreaterThan(0);
  for (const text of [...observed.captured, observed.html, ...merchantRequests]) expect(text).not.toContain(CVC);
  expect(await page.evaluate(() => document.body.innerText as string)).not.toContain(CVC);
  expect(pageErrors).toEqual([]);

  // The vault has it, for one render.
  expect((await asMerchant('GET', `/v1/token/${token}`)).body.cvvAvailable).toBe(true);
  const first = await chargeWithCvc();
  expect(first.status).toBe(200);
  expect(JSON.parse(psp.requests[0]?.body.toString('utf8') ?? '{}')).toEqual({ cvc: CVC });
  const second = await chargeWithCvc();
  expect(second.status).toBe(422);
  expect(second.body.error.code).toBe('cvv_unavailable');
  expect(psp.requests).toHaveLength(1);
  await context.close();
});

it('has the card fields’ lifecycle: created unmounted, mounted later, Enter raises submit, a used session rejects typed', async () => {
  const context = await browser.newContext({ viewport: { width: 520, height: 360 } });
  const page: Page = await context.newPage();
  await page.goto(merchant.origin);
  await page.waitForFunction(() => window.events.some((e: any) => e.type === 'ready'), undefined, { timeout: 30_000 });
  // The session of the first test, already used: the page's server would open a new one.
  await page.evaluate(
    ({ key, grant }) => {
      window.later = [];
      const field = Tessera(key).cvcField({ cvcSession: grant, title: 'Security code again' });
      ['ready', 'submit'].forEach((name) => field.on(name, () => window.later.push(name)));
      field.on('submit', () => {
        window.laterResult = field.submit().then(
          () => 'submitted',
          (e: any) => [e.code, e.type, e instanceof Tessera.TesseraError],
        );
      });
      const box = document.createElement('div');
      box.id = 'later';
      document.querySelector('main').appendChild(box);
      window.laterField = field;
      window.framesBefore = document.querySelectorAll('iframe').length;
      field.mount('#later');
    },
    { key: publishableKey, grant: cvcSession },
  );
  expect(await page.evaluate(() => window.framesBefore)).toBe(1);
  await page.waitForFunction(() => window.later.includes('ready'), undefined, { timeout: 30_000 });
  const frame = await (await page.locator('#later iframe').elementHandle())!.contentFrame();
  await frame!.getByLabel('Security code').pressSequentially(CVC);
  await frame!.getByLabel('Security code').press('Enter');
  await page.waitForFunction(() => window.laterResult !== undefined);
  expect(await page.evaluate(() => window.laterResult)).toEqual(['cvc_session_used', 'integration_error', true]);
  await page.evaluate(() => window.laterField.destroy());
  expect(await page.locator('#later iframe').count()).toBe(0);
  await context.close();
});

it('refuses the CVC route to a publishable key from anywhere but the fields iframe', async () => {
  const args = ['create', '--kind', 'publishable', '--merchant', 'shop', '--mode', 'test', '--json', '--origin', merchant.origin];
  const key = (JSON.parse(stack.cli(args).trim().split('\n').pop() ?? '') as { apiKey: string }).apiKey;
  // A merchant page's own script (no fields Origin) calling the route directly, e.g. a skimmer.
  const direct = await fetch(`${stack.fieldsUrl}/v1/browser/tokens/${token}/cvc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key, origin: merchant.origin, 'x-tessera-parent-origin': merchant.origin },
    body: JSON.stringify({ cvv: '123', cvcSession: (cvcSession as { secret: string }).secret }),
  });
  expect(direct.status).toBe(401);
  // And the secret-key route refuses a publishable key.
  const asPublishable = await apiClient(stack, key)('POST', `/v1/token/${token}/cvc`, { cvv: '123' });
  expect(asPublishable.status).toBe(403);
  expect(asPublishable.body.error.code).toBe('publishable_key_forbidden');
});

it('no card number or CVC appears in any service log', () => {
  expect(findCardDataInLogs(stack.logs(), [TEST_CARDS.visa], [CVC])).toEqual([]);
});

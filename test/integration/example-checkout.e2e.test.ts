/**
 * examples/checkout/server.mjs as a shopper meets it: real services, the sandbox PSP and the
 * example server as processes, and Debian's chromium (playwright-core) paying both ways the page
 * offers: typing into Tessera's card fields on the example page, and "Pay on a Tessera page", the
 * hosted payment page with the amount, whose cards the example charges at its completion endpoint.
 * The example makes its own publishable key, registers its URLs and reads its form signing secret
 * through the admin API.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, SCREENSHOTS } from './browser';
import {
  findCardDataInLogs,
  freePort,
  ManagedProcess,
  ROOT,
  startRedis,
  startSandboxPsp,
  startStack,
  TEST_CARDS,
  type RedisServer,
  type Stack,
} from './harness';

jest.setTimeout(180_000);

const CVC = '046';
const EXPIRY_TYPED = `12${String(new Date().getUTCFullYear() + 3).slice(2)}`;
const OPERATOR = { email: 'ops@example.test', password: 'example-password-12' };

let redis: RedisServer;
let stack: Stack;
let sandbox: ManagedProcess;
let example: ManagedProcess;
let cliExample: ManagedProcess | undefined;
let secretKey = '';
let pspChargesUrl = '';
let browser: Browser;
let fieldsOrigin = '';
let exampleOrigin = '';

beforeAll(async () => {
  redis = await startRedis();
  stack = await startStack(redis);
  fieldsOrigin = stack.fieldsUrl;
  const psp = await startSandboxPsp();
  sandbox = psp.sandbox;
  // What `npm start` provides: a platform operator for the dashboard and a test secret key of merchant `dev`.
  stack.createOperator(OPERATOR.email, OPERATOR.password, null);
  secretKey = stack.createKey('dev', 'test').apiKey;
  pspChargesUrl = psp.chargesUrl;
  const examplePort = await freePort();
  exampleOrigin = `http://127.0.0.1:${examplePort}`;
  example = new ManagedProcess('example', process.execPath, [path.join(ROOT, 'examples/checkout/server.mjs')], {
    PATH: process.env.PATH,
    PORT: String(examplePort),
    TESSERA_URL: `${stack.baseUrl}/v1`,
    TESSERA_ADMIN_URL: stack.adminUrl,
    FIELDS_ORIGIN: fieldsOrigin,
    TESSERA_API_KEY: secretKey,
    TESSERA_ADMIN_EMAIL: OPERATOR.email,
    TESSERA_ADMIN_PASSWORD: OPERATOR.password,
    PSP_URL: psp.chargesUrl,
  }).start();
  await example.waitForOutput('example checkout listening');
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await cliExample?.stop();
  await example?.stop();
  await sandbox?.stop();
  await stack?.stop();
  await redis?.stop();
});

/** Opens the example page, types the card into Tessera's fields, pays, and returns what the page shows. */
async function payWith(number: string, submit: 'click' | 'enter' = 'click'): Promise<{ outcome: string; console: string[]; page: Page }> {
  const page = await browser.newPage();
  const console: string[] = [];
  page.on('console', (msg) => console.push(msg.text()));
  page.on('pageerror', (err) => console.push(`pageerror: ${err.message}`));
  await page.goto(exampleOrigin);
  await page.locator('#pay:not([disabled])').waitFor({ timeout: 30_000 });
  const frame = page.frames().find((f) => f.url().startsWith(`${fieldsOrigin}/fields/v1/card`));
  if (!frame) throw new Error('card fields frame not found');
  await frame.getByLabel('Card number').pressSequentially(number);
  await frame.getByLabel('Expiry date (MM / YY)').pressSequentially(EXPIRY_TYPED);
  const securityCode = frame.getByLabel('Security code');
  await securityCode.pressSequentially(number.length === 15 ? '0461' : CVC);
  if (submit === 'enter') await securityCode.press('Enter');
  else await page.locator('#pay').click();
  const outcome = page.locator('#outcome');
  await outcome.filter({ hasText: /approved|declined|failed/ }).waitFor({ timeout: 30_000 });
  return { outcome: (await outcome.textContent()) ?? '', console, page };
}

async function typeCardOnHostedPage(page: Page, number: string): Promise<void> {
  await page.locator('#cc-number').pressSequentially(number);
  await page.locator('#cc-exp').pressSequentially(EXPIRY_TYPED);
  await page.locator('#cc-csc').pressSequentially(CVC);
}

async function axeViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

describe('the example checkout', () => {
  it('charges the success test card typed into the card fields: the server retains the token and the sandbox PSP approves', async () => {
    const { outcome, console, page } = await payWith(TEST_CARDS.visa);
    expect(outcome).toMatch(/^Payment approved \(ch_\w+\)\.$/);
    expect(example.output).toMatch(/order_[\w-]+: approved \(visa …4242, PSP 200\)/);
    // The page's own Content-Security-Policy let everything it needs load, and nothing failed.
    expect(console.filter((c) => /Content Security Policy|pageerror|Refused/i.test(c))).toEqual([]);
    await page.close();
  });

  it('pays when the shopper presses Enter in the card fields (their submit event)', async () => {
    const { outcome, page } = await payWith(TEST_CARDS.visa, 'enter');
    expect(outcome).toMatch(/^Payment approved \(ch_\w+\)\.$/);
    await page.close();
  });

  it('shows the decline of the declined test card', async () => {
    const { outcome, page } = await payWith(TEST_CARDS.visaDeclined);
    expect(outcome).toBe('Payment declined: generic_decline.');
    expect(example.output).toMatch(/order_[\w-]+: declined \(visa …0002, PSP 402\)/);
    await page.close();
  });

  it('says card payments are unavailable when opened on an origin the key does not allow (localhost instead of 127.0.0.1)', async () => {
    const page = await browser.newPage();
    await page.goto(exampleOrigin.replace('127.0.0.1', 'localhost'));
    await page.locator('#outcome').filter({ hasText: 'unavailable' }).waitFor({ timeout: 30_000 });
    expect(await page.locator('#outcome').textContent()).toBe('Card payments are unavailable on this page (origin_not_allowed).');
    expect(await page.locator('#pay').isDisabled()).toBe(true);
    await page.close();
  });

  it('refuses /pay from another origin and a token it cannot retain', async () => {
    const crossSite = await fetch(`${exampleOrigin}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://evil.example' },
      body: JSON.stringify({ token: 'tok.whatever' }),
    });
    expect(crossSite.status).toBe(403);
    const unknown = await fetch(`${exampleOrigin}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: exampleOrigin },
      body: JSON.stringify({ token: 'tok.doesnotexist000000000000' }),
    });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ error: 'token_not_found' });
  });

  it('has no accessibility violation on the checkout page, card fields included (axe-core)', async () => {
    // A page of its own context: axe-core/playwright needs one to run in the fields' cross-origin frame.
    const page = await (await browser.newContext()).newPage();
    await page.goto(exampleOrigin);
    await page.locator('#pay:not([disabled])').waitFor({ timeout: 30_000 });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'example-checkout.png') });
    expect(await axeViolations(page)).toEqual([]);
    await page.context().close();
  });
});

describe('the example checkout, "Pay on a Tessera page"', () => {
  it('sends the shopper to Tessera’s page with the amount, shows a decline there, and takes another card in the same session', async () => {
    const page = await (await browser.newContext()).newPage();
    const console: string[] = [];
    page.on('console', (msg) => console.push(msg.text()));
    await page.goto(exampleOrigin);
    await Promise.all([
      page.waitForURL((u) => u.origin === fieldsOrigin),
      page.getByRole('button', { name: 'Pay on a Tessera page' }).click(),
    ]);
    expect(await page.locator('#pay-submit').textContent()).toBe('Pay €19.99');
    expect(await page.locator('.merchant-name').textContent()).toBe('Tessera mugs');
    const sessionUrl = page.url();
    await typeCardOnHostedPage(page, TEST_CARDS.visaDeclined);
    await page.locator('#pay-submit').click();
    await page.locator('#form-error').waitFor();
    expect(await page.locator('#form-error').textContent()).toBe('Your card was declined.');
    expect(page.url()).toBe(sessionUrl);
    await typeCardOnHostedPage(page, TEST_CARDS.visa);
    await Promise.all([page.waitForURL((u) => u.origin === exampleOrigin), page.locator('#pay-submit').click()]);
    expect(new URL(page.url()).pathname).toBe('/done');
    expect(await page.locator('h1').textContent()).toBe('Thank you: payment received');
    expect(await page.locator('#outcome').textContent()).toBe('succeeded');
    expect(await page.locator('main').textContent()).toMatch(/order_[\w-]+: €19\.99, visa ending 4242, after 2 attempt\(s\)/);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'example-checkout-hosted.png') });
    expect(await axeViolations(page)).toEqual([]);
    // The example's server charged attempt 1 (declined) and attempt 2 (charged) of one session.
    expect(example.output).toMatch(/attempt 1 of (fs_[\w-]+): declined \(visa …0002\)[\s\S]*attempt 2 of \1: charged \(visa …4242\)/);
    // The checkout page's Content-Security-Policy let the form's redirect to Tessera's page through.
    expect(console.filter((c) => /Content Security Policy|Refused/i.test(c))).toEqual([]);
    await page.context().close();
  });

  it('refuses to open a session for another site’s form', async () => {
    const res = await fetch(`${exampleOrigin}/hosted`, { method: 'POST', headers: { origin: 'https://evil.example' }, redirect: 'manual' });
    expect(res.status).toBe(403);
  });

  it('refuses a completion call without Tessera’s signature, and a return link that is not signed', async () => {
    const forgedCall = await fetch(`${exampleOrigin}/complete`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'tessera-signature': 't=1,v1=00' },
      body: JSON.stringify({ formSession: 'fs_forged', attempt: 1, token: 'tok.forged', amount: 1, currency: 'eur' }),
    });
    expect(forgedCall.status).toBe(400);
    const forgedReturn = await fetch(`${exampleOrigin}/done?order=1&session=fs_forged&status=completed&timestamp=1&signature=00`);
    expect(forgedReturn.status).toBe(400);
    expect(await forgedReturn.text()).toContain('This link is not valid');
  });
});

describe('the example checkout, set up with the CLI as its README shows', () => {
  it('needs no admin login with TESSERA_PUBLISHABLE_KEY and TESSERA_FORM_SECRET, and takes a payment on the hosted page', async () => {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const publishable = stack.createPublishableKey('dev', [origin]);
    // `return-urls set` replaces the list: the first example's URLs stay registered too.
    const paths = ['/done', '/cancel', '/complete'];
    stack.cli(['return-urls', 'set', '--merchant', 'dev', ...[exampleOrigin, origin].flatMap((o) => paths.map((p) => `${o}${p}`))]);
    const formSecret = stack.cli(['return-urls', 'secret', '--merchant', 'dev', '--mode', 'test']).trim();
    cliExample = new ManagedProcess('example-cli', process.execPath, [path.join(ROOT, 'examples/checkout/server.mjs')], {
      PATH: process.env.PATH,
      PORT: String(port),
      TESSERA_URL: `${stack.baseUrl}/v1`,
      // Nothing listens there, and no operator password is at hand: a login attempt would fail the start.
      TESSERA_ADMIN_URL: 'http://127.0.0.1:9',
      TESSERA_STATE_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'example-checkout-')),
      FIELDS_ORIGIN: fieldsOrigin,
      TESSERA_API_KEY: secretKey,
      TESSERA_PUBLISHABLE_KEY: publishable.apiKey,
      TESSERA_FORM_SECRET: formSecret,
      PSP_URL: pspChargesUrl,
    }).start();
    await cliExample.waitForOutput('example checkout listening');
    const page = await browser.newPage();
    await page.goto(origin);
    expect(await page.locator('body').getAttribute('data-publishable-key')).toBe(publishable.apiKey);
    await Promise.all([
      page.waitForURL((u) => u.origin === fieldsOrigin),
      page.getByRole('button', { name: 'Pay on a Tessera page' }).click(),
    ]);
    await typeCardOnHostedPage(page, TEST_CARDS.visa);
    await Promise.all([page.waitForURL((u) => u.origin === origin), page.locator('#pay-submit').click()]);
    expect(await page.locator('#outcome').textContent()).toBe('succeeded');
    await page.close();
  });
});

describe('the example checkout, afterwards', () => {
  it('leaves no card number or CVC in the logs of the example, the services or the sandbox', () => {
    const logs = [stack.logs(), sandbox.output, example.output, cliExample?.output ?? ''].join('\n');
    expect(findCardDataInLogs(logs, [TEST_CARDS.visa, TEST_CARDS.visaDeclined], [CVC])).toEqual([]);
  });
});

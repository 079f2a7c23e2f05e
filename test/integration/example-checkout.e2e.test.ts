/**
 * examples/checkout/server.mjs as a shopper meets it: real services, the sandbox PSP and the
 * example server as processes, and Debian's chromium (playwright-core) typing into Tessera's card
 * fields on the example page. The example makes its own publishable key through the admin API.
 */
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './browser';
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
  const secret = stack.createKey('dev', 'test');
  const examplePort = await freePort();
  exampleOrigin = `http://127.0.0.1:${examplePort}`;
  example = new ManagedProcess('example', process.execPath, [path.join(ROOT, 'examples/checkout/server.mjs')], {
    PATH: process.env.PATH,
    PORT: String(examplePort),
    TESSERA_URL: `${stack.baseUrl}/v1`,
    TESSERA_ADMIN_URL: stack.adminUrl,
    FIELDS_ORIGIN: fieldsOrigin,
    TESSERA_API_KEY: secret.apiKey,
    TESSERA_ADMIN_EMAIL: OPERATOR.email,
    TESSERA_ADMIN_PASSWORD: OPERATOR.password,
    PSP_URL: psp.chargesUrl,
  }).start();
  await example.waitForOutput('example checkout listening');
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await example?.stop();
  await sandbox?.stop();
  await stack?.stop();
  await redis?.stop();
});

/** Opens the example page, types the card into Tessera's fields, pays, and returns what the page shows. */
async function payWith(number: string): Promise<{ outcome: string; console: string[]; page: Page }> {
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
  await frame.getByLabel('Security code').pressSequentially(number.length === 15 ? '0461' : CVC);
  await page.locator('#pay').click();
  const outcome = page.locator('#outcome');
  await outcome.filter({ hasText: /approved|declined|failed/ }).waitFor({ timeout: 30_000 });
  return { outcome: (await outcome.textContent()) ?? '', console, page };
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

  it('shows the decline of the declined test card', async () => {
    const { outcome, page } = await payWith(TEST_CARDS.visaDeclined);
    expect(outcome).toBe('Payment declined: generic_decline.');
    expect(example.output).toMatch(/order_[\w-]+: declined \(visa …0002, PSP 402\)/);
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

  it('leaves no card number or CVC in the logs of the example, the services or the sandbox', () => {
    const logs = [stack.logs(), sandbox.output, example.output].join('\n');
    expect(findCardDataInLogs(logs, [TEST_CARDS.visa, TEST_CARDS.visaDeclined], [CVC])).toEqual([]);
  });
});

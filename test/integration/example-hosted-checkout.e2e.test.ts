/**
 * examples/hosted-checkout/server.mjs as a shopper meets it: real services, the sandbox PSP and
 * the example server as processes, Chromium on Tessera's hosted payment page. The example registers
 * its URLs and reads its form signing secret through the admin API, opens a session with the amount
 * and its completion URL, and charges each card it is called with through /v1/proxy.
 */
import path from 'node:path';
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
  type RedisServer,
  type Stack,
} from './harness';

jest.setTimeout(180_000);

const DECLINED_CARD = '4000000000000002';
const GOOD_CARD = '4242424242424242';
const CVC = '046';
const EXPIRY_TYPED = `12${String(new Date().getUTCFullYear() + 3).slice(2)}`;
const OPERATOR = { email: 'ops@hosted.test', password: 'example-password-12' };

let redis: RedisServer;
let stack: Stack;
let sandbox: ManagedProcess;
let example: ManagedProcess;
let browser: Browser;
let exampleOrigin = '';

beforeAll(async () => {
  redis = await startRedis();
  stack = await startStack(redis);
  const psp = await startSandboxPsp();
  sandbox = psp.sandbox;
  stack.createOperator(OPERATOR.email, OPERATOR.password, null);
  const secret = stack.createKey('dev', 'test');
  const examplePort = await freePort();
  exampleOrigin = `http://127.0.0.1:${examplePort}`;
  example = new ManagedProcess('example', process.execPath, [path.join(ROOT, 'examples/hosted-checkout/server.mjs')], {
    PATH: process.env.PATH,
    PORT: String(examplePort),
    TESSERA_URL: `${stack.baseUrl}/v1`,
    TESSERA_ADMIN_URL: stack.adminUrl,
    TESSERA_SECRET_KEY: secret.apiKey,
    TESSERA_ADMIN_EMAIL: OPERATOR.email,
    TESSERA_ADMIN_PASSWORD: OPERATOR.password,
    PSP_URL: psp.chargesUrl,
  }).start();
  await example.waitForOutput('example hosted checkout listening');
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await example?.stop();
  await sandbox?.stop();
  await stack?.stop();
  await redis?.stop();
});

async function typeCard(page: Page, number: string): Promise<void> {
  await page.locator('#cc-number').pressSequentially(number);
  await page.locator('#cc-exp').pressSequentially(EXPIRY_TYPED);
  await page.locator('#cc-csc').pressSequentially(CVC);
}

describe('the example hosted checkout', () => {
  it('sends the shopper to Tessera’s page with the amount, shows a decline there, and takes another card in the same session', async () => {
    const page = await browser.newPage();
    await page.goto(exampleOrigin);
    await Promise.all([page.waitForURL((u) => u.origin === stack.fieldsUrl), page.locator('#buy').click()]);
    expect(await page.locator('#pay-submit').textContent()).toBe('Pay €19.99');
    expect(await page.locator('.merchant-name').textContent()).toBe('Tessera mugs');
    const sessionUrl = page.url();
    await typeCard(page, DECLINED_CARD);
    await page.locator('#pay-submit').click();
    await page.locator('#form-error').waitFor();
    expect(await page.locator('#form-error').textContent()).toBe('Your card was declined.');
    expect(page.url()).toBe(sessionUrl);
    await typeCard(page, GOOD_CARD);
    await Promise.all([page.waitForURL((u) => u.origin === exampleOrigin), page.locator('#pay-submit').click()]);
    expect(new URL(page.url()).pathname).toBe('/done');
    expect(await page.locator('#outcome').textContent()).toBe('succeeded');
    expect(await page.locator('main').textContent()).toMatch(/visa ending 4242, after 2 attempt\(s\)/);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'example-hosted-checkout.png') });
    await page.close();
  });

  it('leaves no card number or CVC in the logs of the example, the services or the sandbox', () => {
    expect(findCardDataInLogs([stack.logs(), sandbox.output, example.output].join('\n'), [GOOD_CARD, DECLINED_CARD], [CVC])).toEqual([]);
  });
});

/**
 * The dashboard in a real browser: Debian's chromium driven by playwright-core (`npm test`
 * installs it when missing: scripts/test-tools.mjs). One operator rotates a key through the four steps of the spec.
 */
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { collectPageProblems, launchChromium, SCREENSHOTS } from './browser';
import { aCard, apiClient, startRedis, startStack, type RedisServer, type Stack } from './harness';

jest.setTimeout(120_000);

/** The page's globals, for the functions evaluated inside the browser (tests compile without the DOM lib). */
declare const document: {
  activeElement: unknown;
  querySelector(selector: string): { textContent: string | null } | null;
  querySelectorAll(
    selector: string,
  ): Iterable<{ id: string; outerHTML: string; labels: { length: number }; getAttribute(name: string): string | null }>;
};

const OPERATOR = { email: 'ops@acme.test', password: 'correct-horse-battery' };
const INSIDE = '203.0.113.10';
const OUTSIDE = '198.51.100.7';

let redis: RedisServer;
let stack: Stack;
let browser: Browser;
let page: Page;
let pageProblems: string[] = [];

/** A /v1 request as if from `ip`: this stack trusts 127.0.0.1 as a proxy, so X-Forwarded-For counts. */
function tokenizeFrom(apiKey: string, ip: string) {
  return apiClient(stack, apiKey)('POST', '/v1/token', aCard(), { 'x-forwarded-for': ip });
}

/** How the dashboard shows a key: prefix and last four characters. */
function labelOf(apiKey: string): string {
  return `${apiKey.slice(0, 13)}…${apiKey.slice(-4)}`;
}

async function screenshot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

async function createKeyInPage(): Promise<string> {
  await page.getByRole('button', { name: 'Create key' }).click();
  const reveal = page.locator('#new-key');
  await reveal.waitFor({ state: 'visible' });
  const apiKey = ((await page.locator('#new-key-value').textContent()) ?? '').trim();
  expect(apiKey).toMatch(/^tsk_test_[A-Za-z0-9]{32}(?:[A-Za-z0-9]{6})?$/);
  return apiKey;
}

function keyRow(apiKey: string) {
  return page.locator('#keys-body tr', { hasText: labelOf(apiKey) });
}

beforeAll(async () => {
  redis = await startRedis();
  stack = await startStack(redis, { env: { TRUSTED_PROXIES: '127.0.0.1/32' } });
  stack.createOperator(OPERATOR.email, OPERATOR.password, 'acme');
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  page = await context.newPage();
  // 400/401/403 answers of the admin API are expected (validation, session probe); anything else is a bug.
  pageProblems = collectPageProblems(page, /status of 40[013]/);
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await redis?.stop();
});

describe('dashboard in a real browser', () => {
  let oldKey = '';
  let newKey = '';

  it('signs in with an HttpOnly, Secure, SameSite=Strict session cookie', async () => {
    await page.goto(`${stack.adminUrl}/dashboard`);
    await page.getByLabel('Email').fill(OPERATOR.email);
    await page.getByLabel('Password').fill('wrong-password-!');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expectText('#login-error', /email or password is not correct/);
    await page.getByLabel('Password').fill(OPERATOR.password);
    await screenshot('01-sign-in');
    await page.getByLabel('Password').press('Enter');
    await page.locator('#app-view').waitFor({ state: 'visible' });
    await expectText('#merchant-title', /^acme$/);
    const cookies = await page.context().cookies();
    expect(cookies.find((c) => c.name === 'tessera_admin')).toMatchObject({
      httpOnly: true,
      secure: true,
      sameSite: 'Strict',
      path: '/admin',
    });
  });

  it('labels every form control, so screen readers and keyboard users can find them', async () => {
    const unlabelled = await page.evaluate(() =>
      [...document.querySelectorAll('input, textarea, select')]
        .filter((el) => el.getAttribute('type') !== 'hidden' && el.labels.length === 0 && !el.getAttribute('aria-label'))
        .map((el) => el.id || el.outerHTML),
    );
    expect(unlabelled).toEqual([]);
  });

  it('creates a key and shows it exactly once, with a copy button', async () => {
    oldKey = await createKeyInPage();
    await screenshot('02-new-key-shown-once');
    await page.getByRole('button', { name: 'Copy' }).click();
    await expectText('#copy-status', /Copied|Selected/);
    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await page.locator('#new-key').isHidden()).toBe(true);
    expect(await page.content()).not.toContain(oldKey);
    await keyRow(oldKey).waitFor();
    expect((await tokenizeFrom(oldKey, OUTSIDE)).status).toBe(201);
  });

  it('restricts the key to an IP range, with a clear message for an invalid range', async () => {
    await page.getByRole('button', { name: `Edit restrictions of key ${labelOf(oldKey)}` }).click();
    const ips = page.getByLabel('Allowed IP addresses', { exact: true }).and(page.locator('#edit-cidrs'));
    await ips.fill('203.0.113.0/33');
    await page.getByRole('button', { name: 'Save restrictions' }).click();
    await expectText('#edit-cidrs-error', /"203\.0\.113\.0\/33" is not an IPv4\/IPv6 address or CIDR/);
    expect(await ips.getAttribute('aria-invalid')).toBe('true');
    await screenshot('03-invalid-ip-range');
    await ips.fill('203.0.113.0/24');
    await page.getByRole('button', { name: 'Save restrictions' }).click();
    await page.locator('#edit-dialog').waitFor({ state: 'hidden' });
    await keyRow(oldKey).getByText('203.0.113.0/24').waitFor();
  });

  it('the restricted key gets 401 from outside the range and 201 from inside', async () => {
    const outside = await tokenizeFrom(oldKey, OUTSIDE);
    expect(outside.status).toBe(401);
    expect(outside.body.error.code).toBe('ip_not_allowed');
    expect((await tokenizeFrom(oldKey, INSIDE)).status).toBe(201);
    await page.getByRole('button', { name: 'Refresh keys' }).click();
    await keyRow(oldKey).getByText(`from ${INSIDE}`).waitFor();
  });

  it('rotates: a replacement with the same restrictions, tested in the page and from the range', async () => {
    await page.getByRole('button', { name: `Rotate key ${labelOf(oldKey)}: create a replacement` }).click();
    expect(await page.locator('#create-cidrs').inputValue()).toBe('203.0.113.0/24');
    newKey = await createKeyInPage();
    expect(newKey).not.toBe(oldKey);
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await keyRow(newKey).getByText('203.0.113.0/24').waitFor();

    await page.getByLabel('API key').fill(newKey);
    await page.getByLabel('As if from IP address').fill(OUTSIDE);
    await page.getByRole('button', { name: 'Test key' }).click();
    await expectText('#test-result', /Refused: 401 ip_not_allowed/);
    await page.getByLabel('As if from IP address').fill(INSIDE);
    await page.getByRole('button', { name: 'Test key' }).click();
    await expectText('#test-result', /Accepted: the gateway answers 200/);
    await screenshot('04-test-new-key');
    expect((await tokenizeFrom(newKey, INSIDE)).status).toBe(201);
  });

  it('closes the revoke confirmation with Escape, leaving the key active', async () => {
    const revoke = page.getByRole('button', { name: `Revoke key ${labelOf(oldKey)}` });
    await revoke.focus();
    await page.keyboard.press('Enter');
    await page.locator('#revoke-dialog').waitFor({ state: 'visible' });
    await page.keyboard.press('Escape');
    await page.locator('#revoke-dialog').waitFor({ state: 'hidden' });
    expect(await revoke.evaluate((el) => el === document.activeElement)).toBe(true);
    await keyRow(oldKey).getByText('Active').waitFor();
  });

  it('revokes the old key after confirmation; it then gets 401 while the new key keeps working', async () => {
    await page.getByRole('button', { name: `Revoke key ${labelOf(oldKey)}` }).click();
    await page.locator('#revoke-dialog').waitFor({ state: 'visible' });
    await screenshot('05-revoke-confirmation');
    await page.getByRole('button', { name: 'Revoke key', exact: true }).click();
    await page.locator('#revoke-dialog').waitFor({ state: 'hidden' });
    await keyRow(oldKey).getByText('Revoked', { exact: true }).waitFor();

    const old = await tokenizeFrom(oldKey, INSIDE);
    expect(old.status).toBe(401);
    expect(old.body.error.code).toBe('api_key_invalid');
    expect((await tokenizeFrom(newKey, INSIDE)).status).toBe(201);
  });

  it('creates a publishable key that needs an allowed origin, shows its origins, and the API refuses it with 403', async () => {
    await page.getByLabel('Publishable').check();
    expect(await page.locator('#create-cidrs').isHidden()).toBe(true);
    await page.getByRole('button', { name: 'Create key' }).click();
    await expectText('#create-origins-error', /at least one allowed origin/);
    expect(await page.locator('#create-origins').getAttribute('aria-invalid')).toBe('true');
    // An origin is stored exactly as written, so only its canonical spelling is taken; the error says which it is.
    await page.getByLabel('Allowed origins').and(page.locator('#create-origins')).fill('https://Shop.Example/');
    await page.getByRole('button', { name: 'Create key' }).click();
    await expectText('#create-origins-error', /write it as "https:\/\/shop\.example"/);
    await page.getByLabel('Allowed origins').and(page.locator('#create-origins')).fill('https://shop.example');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.locator('#new-key').waitFor({ state: 'visible' });
    const publishableKey = ((await page.locator('#new-key-value').textContent()) ?? '').trim();
    expect(publishableKey).toMatch(/^tpk_test_[A-Za-z0-9]{38}$/);
    await screenshot('05b-publishable-key-shown-once');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    const row = keyRow(publishableKey);
    await row.getByText('https://shop.example', { exact: true }).waitFor();
    await row.getByText('Publishable', { exact: true }).waitFor();
    // The form is back to a secret key for the next one.
    expect(await page.locator('#create-cidrs').isVisible()).toBe(true);

    const refused = await tokenizeFrom(publishableKey, INSIDE);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('publishable_key_forbidden');
  });

  it('shows the audit log of the sign-in and every key change, without key material', async () => {
    await page.getByRole('button', { name: 'Refresh audit log' }).click();
    const audit = page.locator('#audit-body');
    for (const action of ['Signed in', 'Sign-in failed', 'Created key', 'Changed restrictions', 'Tested key', 'Revoked key']) {
      await audit.getByText(action, { exact: true }).first().waitFor();
    }
    const text = (await audit.textContent()) ?? '';
    expect(text).toContain(OPERATOR.email);
    expect(text).not.toContain(oldKey.slice(9));
    expect(text).not.toContain(newKey.slice(9));
    await screenshot('06-dashboard-after-rotation');
    expect(pageProblems).toEqual([]);
  });
});

async function expectText(selector: string, pattern: RegExp): Promise<void> {
  const locator = page.locator(selector);
  try {
    await page.waitForFunction(
      ([sel, source, flags]) =>
        new RegExp(source as string, flags as string).test(document.querySelector(sel as string)?.textContent ?? ''),
      [selector, pattern.source, pattern.flags],
      { timeout: 10_000 },
    );
  } catch {
    throw new Error(`${selector} never matched ${pattern}; it reads: ${await locator.textContent()}`);
  }
}

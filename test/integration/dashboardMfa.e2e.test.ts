/**
 * Two-factor sign-in to the dashboard in a real browser (PCI DSS 8.4.2, 8.3.4): with the second
 * factor required (as in production), an operator's first sign-in enrols an authenticator; the
 * test plays the authenticator app, computing RFC 6238 codes from the secret the page shows.
 */
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { base32Decode, hotp, totpStep } from '../../services/admin/src/domain/totp';
import { AdminClient } from './adminClient';
import { launchChromium, SCREENSHOTS } from './browser';
import { startRedis, startStack, type RedisServer, type Stack } from './harness';

jest.setTimeout(180_000);

declare const document: { querySelector(selector: string): { textContent: string | null } | null };

const OPERATOR = { email: 'mfa@acme.test', password: 'correct-horse-battery' };
const LOCKOUT_SECONDS = 120;

let redis: RedisServer;
let stack: Stack;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const pageProblems: string[] = [];

/** The authenticator app: the secret read from the page, and the last step it gave a code for. */
const app: { secret: Buffer; lastStep: number } = { secret: Buffer.alloc(0), lastStep: -1 };

/** A code the gateway accepts now: the next unused step within its ±1 step, else wait for one. */
async function nextCode(): Promise<string> {
  for (;;) {
    const current = totpStep(Date.now());
    // Leave a step near its end alone: it may expire between typing and checking.
    const candidates = [current, current + 1].filter((step) => step > app.lastStep);
    const step = candidates[0];
    if (step !== undefined) {
      app.lastStep = step;
      return hotp(app.secret, step);
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

function wrongCode(): string {
  const current = totpStep(Date.now());
  const valid = new Set([-1, 0, 1].map((d) => hotp(app.secret, current + d)));
  for (let n = 0; ; n++) {
    const candidate = String(n).padStart(6, '0');
    if (!valid.has(candidate)) return candidate;
  }
}

async function screenshot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

async function expectText(selector: string, pattern: RegExp, on: Page = page): Promise<void> {
  try {
    await on.waitForFunction(
      ([sel, source, flags]) =>
        new RegExp(source as string, flags as string).test(document.querySelector(sel as string)?.textContent ?? ''),
      [selector, pattern.source, pattern.flags],
      { timeout: 15_000 },
    );
  } catch {
    throw new Error(`${selector} never matched ${pattern}; it reads: ${await on.locator(selector).textContent()}`);
  }
}

async function signIn(on: Page, password: string, second?: string): Promise<void> {
  await on.getByLabel('Email').fill(OPERATOR.email);
  await on.getByLabel('Password').fill(password);
  if (second !== undefined) await on.getByLabel('Authentication code').fill(second);
  await on.getByRole('button', { name: 'Sign in' }).click();
}

async function signOut(): Promise<void> {
  await page.getByRole('button', { name: 'Log out' }).click();
  await page.locator('#login-view').waitFor({ state: 'visible' });
}

beforeAll(async () => {
  redis = await startRedis();
  stack = await startStack(redis, {
    env: {
      TRUSTED_PROXIES: '127.0.0.1/32',
      ADMIN_MFA_REQUIRED: 'true',
      ADMIN_LOGIN_MAX_PER_ACCOUNT: '10',
      ADMIN_LOGIN_MAX_PER_SOURCE: '5',
      ADMIN_LOGIN_WINDOW_SECONDS: '600',
      ADMIN_LOGIN_LOCKOUT_SECONDS: String(LOCKOUT_SECONDS),
    },
  });
  stack.createOperator(OPERATOR.email, OPERATOR.password, 'acme');
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on('pageerror', (err) => pageProblems.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    // 401/403/429 answers of the admin API are expected here (codes asked for, refused, locked).
    if (msg.type() === 'error' && !/status of (40[013]|429)/.test(msg.text())) pageProblems.push(`console: ${msg.text()}`);
  });
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await redis?.stop();
});

describe('dashboard two-factor sign-in in a real browser', () => {
  let recoveryCodes: string[] = [];

  it('makes the first sign-in set up an authenticator before anything else', async () => {
    await page.goto(`${stack.adminUrl}/dashboard`);
    await signIn(page, OPERATOR.password);
    await page.locator('#mfa-view').waitFor({ state: 'visible' });
    expect(await page.locator('#app-view').isHidden()).toBe(true);
    await expectText('#mfa-secret', /^[A-Z2-7 ]{32,}$/);
    const shownSecret = ((await page.locator('#mfa-secret').textContent()) ?? '').replace(/\s/g, '');
    const uri = (await page.locator('#mfa-uri').textContent()) ?? '';
    expect(uri).toMatch(/^otpauth:\/\/totp\/Tessera:mfa%40acme\.test\?/);
    expect(new URL(uri).searchParams.get('secret')).toBe(shownSecret);
    app.secret = base32Decode(shownSecret) as Buffer;
    await page.getByRole('button', { name: 'Copy key' }).click();
    await expectText('#mfa-copy-status', /Copied|Selected/);
    await screenshot('mfa-01-set-up');

    // The API refuses everything else to this password-only session.
    const keys = await page.evaluate(async () => (await fetch('/admin/v1/keys?merchantId=acme')).status);
    expect(keys).toBe(403);

    await page.getByLabel('Code from the app').fill(wrongCode());
    await page.getByRole('button', { name: 'Turn on two-factor' }).click();
    await expectText('#mfa-error', /not correct/);
    await page.getByLabel('Code from the app').fill(await nextCode());
    await page.getByRole('button', { name: 'Turn on two-factor' }).click();
    await page.locator('#mfa-recovery').waitFor({ state: 'visible' });
    recoveryCodes = (await page.locator('#mfa-recovery-codes li').allTextContents()).map((c) => c.trim());
    expect(recoveryCodes).toHaveLength(10);
    for (const code of recoveryCodes) expect(code).toMatch(/^[a-z0-9]{5}-[a-z0-9]{5}$/);
    await screenshot('mfa-02-recovery-codes');
    await page.getByRole('button', { name: 'I have stored them' }).click();
    await page.locator('#app-view').waitFor({ state: 'visible' });
    await expectText('#merchant-title', /^acme$/);
    // Shown once: gone from the page.
    expect(await page.content()).not.toContain(recoveryCodes[0]);
    expect(await page.content()).not.toContain(shownSecret);
  });

  it('signs in with the password and a code, and refuses a wrong code', async () => {
    await signOut();
    await signIn(page, OPERATOR.password);
    await page.getByLabel('Authentication code').waitFor({ state: 'visible' });
    await expectText('#login-error', /code from your authenticator/);
    await page.getByLabel('Authentication code').fill(wrongCode());
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expectText('#login-error', /not correct, has expired or was already used/);
    expect(await page.locator('#app-view').isHidden()).toBe(true);
    await screenshot('mfa-03-wrong-code');
    await page.getByLabel('Authentication code').fill(await nextCode());
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#app-view').waitFor({ state: 'visible' });
  });

  it('accepts a recovery code once', async () => {
    const code = recoveryCodes[0] ?? '';
    await signOut();
    await signIn(page, OPERATOR.password);
    await page.getByLabel('Authentication code').waitFor({ state: 'visible' });
    await page.getByLabel('Authentication code').fill(code);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#app-view').waitFor({ state: 'visible' });
    await signOut();
    await signIn(page, OPERATOR.password);
    await page.getByLabel('Authentication code').waitFor({ state: 'visible' });
    await page.getByLabel('Authentication code').fill(code);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expectText('#login-error', /already used/);
    expect(await page.locator('#app-view').isHidden()).toBe(true);
  });

  it('locks the account after 10 failures, while the operator\u2019s own browser still signs in', async () => {
    const attempt = (ip: string, password: string) => new AdminClient(stack.adminUrl, ip).login(OPERATOR.email, password);
    // Two failures so far (the wrong code, the reused recovery code). One outside address fails
    // five times and is then blocked for this account, though the account is not locked yet.
    for (let i = 0; i < 5; i++) expect((await attempt('203.0.113.1', `guess-a-${i}`)).status).toBe(401);
    const sourceBlocked = await attempt('203.0.113.1', OPERATOR.password);
    expect(sourceBlocked.status).toBe(429);
    // A second address brings the account to 10 failures: now it is locked for every other source.
    for (let i = 0; i < 3; i++) expect((await attempt('203.0.113.2', `guess-b-${i}`)).status).toBe(401);
    const locked = await attempt('203.0.113.3', OPERATOR.password);
    expect(locked.status).toBe(429);
    expect(locked.body.error.message).toMatch(/for this account/);
    // A browser that never signed in with the second factor is locked out, right password or not.
    const stranger = await (await browser.newContext()).newPage();
    await stranger.goto(`${stack.adminUrl}/dashboard`);
    await signIn(stranger, OPERATOR.password);
    await expectText('#login-error', /Too many attempts\. Try again in \d+ seconds/, stranger);
    const retryAfter = Number(/in (\d+) seconds/.exec((await stranger.locator('#login-error').textContent()) ?? '')?.[1]);
    expect(retryAfter).toBeGreaterThan(LOCKOUT_SECONDS - 30);
    await stranger.screenshot({ path: path.join(SCREENSHOTS, 'mfa-04-account-locked.png'), fullPage: true });
    await stranger.context().close();

    // The operator's browser carries the trusted-device cookie from its earlier two-factor sign-in.
    await page.getByLabel('Authentication code').fill('');
    await page.getByLabel('Password').fill(OPERATOR.password);
    await page.getByLabel('Authentication code').fill(await nextCode());
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#app-view').waitFor({ state: 'visible' });
    const device = (await context.cookies()).find((c) => c.name === 'tessera_admin_device');
    expect(device).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Strict', path: '/admin/v1/login' });
    expect(pageProblems).toEqual([]);
  });
});

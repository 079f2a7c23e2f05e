/**
 * The dashboard's Requests page in a real browser (Debian's chromium, playwright-core): after a
 * mixed session of tokenize, proxy and errors, an operator sees the charts of the last hours,
 * filters the log, opens one PSP call in full, and the page passes axe-core.
 */
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { findCardNumberRuns } from '@tessera/common';
import type { Browser, Page } from 'playwright-core';
import { collectPageProblems, launchChromium, SCREENSHOTS } from './browser';
import { aCard, apiClient, freePort, TEST_CARDS, useSharedStack } from './harness';
import { cardNumbersIn } from './cardShapes';

jest.setTimeout(120_000);

const env = useSharedStack({ psp: true });
const acmeId = env.merchant('acme');
const OPERATOR = { email: `ops@${acmeId}.test`, password: 'correct-horse-battery' };

let browser: Browser;
let page: Page;
let pageProblems: string[] = [];

beforeAll(async () => {
  env.stack.createOperator(OPERATOR.email, OPERATOR.password, acmeId);
  const call = apiClient(env.stack, env.stack.createKey(acmeId).apiKey);
  // The mixed session: 3 cards tokenized and read back, refusals, PSP answers 200 and 402, an unreachable PSP.
  const tokens: string[] = [];
  for (const number of [TEST_CARDS.visa, TEST_CARDS.mastercard, TEST_CARDS.amex]) {
    tokens.push((await call('POST', '/v1/token', aCard({ number, cvv: number === TEST_CARDS.amex ? '0461' : '046' }))).body.token);
  }
  expect((await call('GET', `/v1/token/${tokens[0]}`)).status).toBe(200);
  expect((await call('GET', '/v1/token/tok.unknown')).status).toBe(404);
  expect((await call('POST', '/v1/token', aCard({ number: '4242424242424241' }))).status).toBe(400);
  let declines = 0;
  env.psp.reply = (_req, res) => {
    const declined = declines++ % 2 === 1;
    res.writeHead(declined ? 402 : 200, { 'content-type': 'application/json' });
    res.end(declined ? '{"error":"card_declined"}' : '{"ok":true}');
  };
  for (const token of tokens) {
    for (let i = 0; i < 2; i++) {
      const res = await call('POST', '/v1/proxy', {
        method: 'post',
        token,
        pspUrl: `${env.psp.url}/charges`,
        pspHeaders: { Authorization: 'Bearer sk_psp_secret_value', 'Content-Type': 'application/json' },
        pspBody: '{"card":"[CARD_NUMBER]","exp":"[CARD_EXPIRY_MONTH]/[CARD_EXPIRY_YEAR]","amount":1000}',
      });
      expect([200, 402]).toContain(res.status);
    }
  }
  const unreachable = await call('POST', '/v1/proxy', {
    method: 'post',
    token: tokens[0],
    pspUrl: `http://127.0.0.1:${await freePort()}/x`,
    pspBody: '{}',
  });
  expect(unreachable.status).toBe(502);

  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  page = await context.newPage();
  // The session probe before sign-in answers 401.
  pageProblems = collectPageProblems(page, /status of 401/);
});

afterAll(async () => {
  await browser?.close();
});

async function screenshot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

describe('the Requests page', () => {
  it('shows charts of requests per minute, error rate and PSP p50/p99 after a mixed session', async () => {
    await page.goto(`${env.stack.adminUrl}/dashboard/`);
    await page.getByLabel('Email').fill(OPERATOR.email);
    await page.getByLabel('Password').fill(OPERATOR.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#app-view').waitFor({ state: 'visible' });
    await page.getByRole('link', { name: 'Requests' }).click();
    await page.locator('#requests-view').waitFor({ state: 'visible' });
    expect(await page.getByRole('link', { name: 'Requests' }).getAttribute('aria-current')).toBe('page');
    // 13 requests: 3 + 1 + 1 + 1 tokenization calls, 6 PSP calls, 1 unreachable PSP.
    await page.locator('#requests-body tr').nth(12).waitFor();
    expect(await page.locator('#requests-body tr').count()).toBe(13);
    await page.locator('#chart-requests rect').first().waitFor();
    expect(await page.locator('#stats-summary').textContent()).toMatch(/13 requests, 46\.\d% errors \(5 4xx, 1 5xx\), 6 PSP calls/);
    expect(await page.locator('#chart-latency path[data-series="PSP p50"]').getAttribute('d')).toMatch(/^M/);
    expect(await page.locator('#chart-latency path[data-series="PSP p99"]').getAttribute('d')).toMatch(/^M/);
    expect(await page.locator('#chart-errors circle').count()).toBeGreaterThan(0);
    expect(await page.getByRole('img', { name: /Requests per minute/ }).count()).toBe(1);
    await screenshot('requests-page');
  });

  it('filters the log by status class and request id', async () => {
    await page.getByLabel('Status').selectOption('5xx');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expectRows(1);
    expect(await page.locator('#requests-body').textContent()).toContain('psp_unreachable');
    await page.getByLabel('Status').selectOption('4xx');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expectRows(5);
    const requestId = (await page.locator('#requests-body tr .sub').first().textContent()) ?? '';
    await page.getByRole('button', { name: 'Clear' }).click();
    await expectRows(13);
    await page.getByLabel('Request id').fill(requestId);
    await page.getByRole('button', { name: 'Filter' }).click();
    await expectRows(1);
    await page.getByRole('button', { name: 'Clear' }).click();
    await expectRows(13);
  });

  it('opens a PSP call in full: template with placeholders and header names, never values or card data', async () => {
    const declined = page.locator('#requests-body tr', { hasText: '402' }).first();
    await declined.getByRole('button', { name: /Details of request/ }).click();
    const dialog = page.locator('#request-dialog');
    await dialog.waitFor({ state: 'visible' });
    expect(await page.locator('#request-template').textContent()).toBe(
      '{"card":"[CARD_NUMBER]","exp":"[CARD_EXPIRY_MONTH]/[CARD_EXPIRY_YEAR]","amount":1000}',
    );
    expect(await dialog.textContent()).toContain('Authorization, Content-Type');
    expect(await dialog.textContent()).toMatch(/PSP status402/);
    await page.locator('#request-dialog').screenshot({ path: path.join(SCREENSHOTS, 'requests-detail.png') });
    // The dashboard writes each time as "Nov 26, 2026, 11:13:40 AM": twelve digits joined by short
    // separators, which the detector flags whenever they happen to pass Luhn (one second in ten).
    // They come from the clock, not from a caller, so they are left out of the scan.
    const html = (await page.content()).replace(/[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d{2}:\d{2}\s?[AP]M/g, '[time]');
    expect(html).not.toContain('sk_psp_secret_value');
    // What the detector flags, with some context, so a failure shows where.
    expect(findCardNumberRuns(html).map(([start, end]) => html.slice(Math.max(0, start - 60), end + 10))).toEqual([]);
    expect(cardNumbersIn(html)).toEqual([]);
    const axe = await new AxeBuilder({ page }).include('#request-dialog').analyze();
    expect(axe.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
    await page.getByRole('button', { name: 'Close' }).click();
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent)).toBe('Details');
  });

  it('has no accessibility violation (axe-core)', async () => {
    const results = await new AxeBuilder({ page }).include('#requests-view').include('.topbar').analyze();
    expect(results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
  });

  it('ran without script errors or CSP violations', () => {
    expect(pageProblems).toEqual([]);
  });
});

async function expectRows(count: number): Promise<void> {
  await page.waitForFunction((n) => (globalThis as any).document.querySelectorAll('#requests-body tr').length === n, count, {
    timeout: 10_000,
  });
}

/**
 * The dashboard's Routes page in a real browser (Debian's chromium driven by playwright-core): an
 * operator applies a route pasted as YAML, sees it listed and its document, dry-runs a sample and
 * sees only masked card data, sees an invalid document refused next to the field, and deletes the
 * route; every state passes axe, and no full card number is ever on the page. The forward-proxy
 * CA section's command, run by a shell, downloads the merchant's CA certificate from the API.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import AxeBuilder from '@axe-core/playwright';
import { Redis } from 'ioredis';
import type { Browser, Page } from 'playwright-core';
import { findCardNumberRuns } from '@tessera/common';
import { RedisRouteStore } from '@tessera/routes';
import { collectPageProblems, launchChromium, SCREENSHOTS } from './browser';
import { startRedis, startStack, type RedisServer, type Stack } from './harness';

jest.setTimeout(120_000);

/** The page's globals, for the functions evaluated inside the browser (tests compile without the DOM lib). */
declare const document: {
  activeElement: unknown;
  body: { innerText: string };
  querySelectorAll(
    selector: string,
  ): Iterable<{ id: string; outerHTML: string; labels: { length: number } | null; getAttribute(name: string): string | null }>;
};

const OPERATOR = { email: 'ops@acme.test', password: 'correct-horse-battery' };
const PAN = '4242424242424242';

const ROUTE_YAML = `id: inbound-checkout
kind: inbound
mode: test
inbound:
  path: /checkout
  upstream: https://shop.example/checkout
filters:
  - { location: json, pointer: /card/number, store: number, aliasFormat: card_bin_last4 }
  - { location: json, pointer: /card/cvc, store: cvv }
unmatchedCardData: refuse
`;

let redis: RedisServer;
let stack: Stack;
let browser: Browser;
let page: Page;
let client: Redis;
let routes: RedisRouteStore;
let pageProblems: string[] = [];

async function screenshot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

async function axeViolations(selector: string): Promise<string[]> {
  const result = await new AxeBuilder({ page }).include(selector).analyze();
  return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

const REAL_LOOKING_PAN = '4111111111111111';
/** Either card's digits, as typed or grouped (spaces or dashes between them). */
const FULL_NUMBERS = [PAN, REAL_LOOKING_PAN].map((pan) => new RegExp(pan.split('').join('[ -]?')));

/**
 * What the page shows and holds (text and markup): neither sample card's full number. A scan for
 * any card-like run covers the dry run's answer; the whole page has timestamps, which can pass Luhn.
 */
async function cardNumbersOnPage(): Promise<string[]> {
  const shown = await page.evaluate(() => document.body.innerText);
  const markup = await page.content();
  const found = FULL_NUMBERS.filter((re) => re.test(shown) || re.test(markup)).map(String);
  const result = (await page.locator('#dry-run-result').textContent()) ?? '';
  return [...found, ...findCardNumberRuns(result).map(([start, end]) => `dry run ${start}-${end}`)];
}

const row = (id: string) => page.locator('#routes-body tr', { has: page.locator('code', { hasText: id }) });

beforeAll(async () => {
  redis = await startRedis();
  stack = await startStack(redis);
  stack.createOperator(OPERATOR.email, OPERATOR.password, 'acme');
  client = new Redis(redis.url);
  routes = new RedisRouteStore(client);
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  page = await context.newPage();
  page.setDefaultTimeout(15_000);
  // 400 (a refused document, a refused sample) and 401 (the session probe) are expected answers.
  pageProblems = collectPageProblems(page, /status of 40[01]/);
});

afterAll(async () => {
  await browser?.close();
  client?.disconnect();
  await stack?.stop();
  await redis?.stop();
});

describe('the Routes page', () => {
  it('opens from the navigation once signed in, empty, with every control labelled', async () => {
    await page.goto(`${stack.adminUrl}/dashboard/`);
    await page.getByLabel('Email').fill(OPERATOR.email);
    await page.getByLabel('Password').fill(OPERATOR.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#app-view').waitFor({ state: 'visible' });
    await page.getByRole('link', { name: 'Routes' }).click();
    await page.locator('#routes-view').waitFor({ state: 'visible' });
    expect(await page.getByRole('link', { name: 'Routes' }).getAttribute('aria-current')).toBe('page');
    await page.getByText('No routes yet. Apply a document above.').waitFor();
    const unlabelled = await page.evaluate(() =>
      [...document.querySelectorAll('#routes-view input, #routes-view select, #routes-view textarea')]
        .filter((el) => (el.labels?.length ?? 0) === 0 && !el.getAttribute('aria-label'))
        .map((el) => el.id || el.outerHTML),
    );
    expect(unlabelled).toEqual([]);
    expect(await axeViolations('#routes-view')).toEqual([]);
  });

  it('applies a route pasted as YAML, lists it and shows its document as YAML', async () => {
    await page.getByLabel('Route document (YAML or JSON)').fill(ROUTE_YAML);
    await page.getByRole('button', { name: 'Apply', exact: true }).click();
    await page.locator('#route-apply-result').getByText('inbound-checkout created').waitFor();
    const listed = row('inbound-checkout');
    await listed.waitFor();
    expect(((await listed.textContent()) ?? '').replace(/\s+/g, ' ')).toMatch(
      /inbound-checkout\s*inbound\s*test\s*\/checkout → https:\/\/shop\.example\/checkout\s*2/,
    );
    expect((await routes.get('acme', 'inbound-checkout'))?.route.inbound?.upstream).toBe('https://shop.example/checkout');

    await page.getByRole('button', { name: 'Show the document of inbound-checkout' }).click();
    await page.locator('#route-show').waitFor({ state: 'visible' });
    const yaml = (await page.locator('#route-yaml').textContent()) ?? '';
    expect(yaml).toMatch(/^id: inbound-checkout\nkind: inbound\nmode: test\n/);
    expect(yaml).toContain('upstream: https://shop.example/checkout');
    await screenshot('routes-01-applied');
    expect(await axeViolations('#routes-view')).toEqual([]);
  });

  it('dry-runs a sample with a test card: the masked places and body, never the full number', async () => {
    await page.getByRole('button', { name: 'Dry-run a sample on inbound-checkout' }).click();
    await page.getByLabel('Sample body').fill(JSON.stringify({ order: '1001', card: { number: PAN, cvc: '123' } }));
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.locator('#dry-run-result').waitFor({ state: 'visible' });
    await page.locator('#dry-run-outcome').getByText('Forwarded.').waitFor();
    const places = page.locator('#dry-run-places tr');
    expect(await places.count()).toBe(2);
    expect(((await places.nth(0).textContent()) ?? '').replace(/\s+/g, ' ')).toBe('0number424242******4242424242XXXXXX4242');
    expect(JSON.parse((await page.locator('#dry-run-output').textContent()) ?? '')).toEqual({
      order: '1001',
      card: { number: '424242XXXXXX4242', cvc: 'tok.dry_run_placeholder' },
    });
    // The sample is what the operator typed; clear it, then nothing on the page is a card number.
    await page.getByLabel('Sample body').fill('');
    expect(await cardNumbersOnPage()).toEqual([]);
    await screenshot('routes-02-dry-run');
    expect(await axeViolations('#routes-view')).toEqual([]);
  });

  it('refuses a sample with a card that is not a test card, next to the field and without echoing it', async () => {
    await page.getByLabel('Sample body').fill(JSON.stringify({ card: { number: REAL_LOOKING_PAN } }));
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page
      .locator('#dry-run-error')
      .getByText(/published test cards only/)
      .waitFor();
    expect(await page.locator('#dry-run-result').isHidden()).toBe(true);
    await page.getByLabel('Sample body').fill('');
    expect(await cardNumbersOnPage()).toEqual([]);
    expect(await axeViolations('#routes-view')).toEqual([]);
  });

  it('shows an invalid document’s refusal next to the field, and applies nothing', async () => {
    await page
      .getByLabel('Route document (YAML or JSON)')
      .fill(ROUTE_YAML.replace('upstream: https://', 'upstream: ftp://').replace('inbound-checkout', 'broken'));
    await page.getByRole('button', { name: 'Apply', exact: true }).click();
    const error = page.locator('#route-document-error');
    await error.waitFor({ state: 'visible' });
    expect(await error.textContent()).toMatch(/^inbound\.upstream: /);
    expect(await page.getByLabel('Route document (YAML or JSON)').getAttribute('aria-invalid')).toBe('true');
    expect(await routes.get('acme', 'broken')).toBeUndefined();

    await page.getByLabel('Route document (YAML or JSON)').fill('id: [unclosed');
    await page.getByRole('button', { name: 'Apply', exact: true }).click();
    await error.getByText(/not YAML or JSON/).waitFor();
    await screenshot('routes-03-invalid');
    expect(await axeViolations('#routes-view')).toEqual([]);
  });

  it('tells the merchant how to get its forward-proxy CA certificate, with a command that downloads it from the API', async () => {
    const section = page.locator('section', { has: page.getByRole('heading', { name: 'Forward-proxy CA certificate' }) });
    await section.waitFor();
    expect(await page.locator('#forward-ca-merchant').textContent()).toBe('acme');
    const command = (await page.locator('#forward-ca-command').textContent()) ?? '';
    expect(command).toContain('/v1/forward-proxy/ca.pem');
    expect(command).toContain('x-api-key: $TESSERA_SECRET_KEY');
    await section.getByRole('button', { name: 'Copy command' }).click();
    await page
      .locator('#forward-ca-copy-status')
      .getByText(/Copied to the clipboard|Selected/)
      .waitFor();
    expect(await axeViolations('#routes-view')).toEqual([]);

    // The command as shown works, run by a shell as the merchant would, with a secret key of acme.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-routes-ca-'));
    try {
      const key = stack.createKey('acme', 'test');
      await promisify(execFile)('sh', ['-c', command], {
        cwd: dir,
        timeout: 15_000,
        env: { PATH: process.env.PATH, TESSERA_API_URL: stack.baseUrl, TESSERA_SECRET_KEY: key.apiKey },
      });
      const pem = fs.readFileSync(path.join(dir, 'tessera-ca.pem'), 'utf8');
      expect(pem).toMatch(/^-----BEGIN CERTIFICATE-----\n[\s\S]+\n-----END CERTIFICATE-----\n?$/);
      // The public certificate only, never a key.
      expect(pem).not.toMatch(/PRIVATE KEY/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('closes the delete confirmation with Escape, keeping the route; then deletes it', async () => {
    const remove = page.getByRole('button', { name: 'Delete inbound-checkout' });
    await remove.click();
    await page.locator('#route-delete-dialog').waitFor({ state: 'visible' });
    expect(await axeViolations('#route-delete-dialog')).toEqual([]);
    await page.keyboard.press('Escape');
    await page.locator('#route-delete-dialog').waitFor({ state: 'hidden' });
    expect(await remove.evaluate((el) => el === document.activeElement)).toBe(true);
    expect(await routes.get('acme', 'inbound-checkout')).toBeDefined();

    await remove.click();
    await page.getByRole('button', { name: 'Delete route' }).click();
    await page.locator('#route-delete-dialog').waitFor({ state: 'hidden' });
    await page.getByText('No routes yet. Apply a document above.').waitFor();
    expect(await page.locator('#route-show').isHidden()).toBe(true);
    expect(await routes.get('acme', 'inbound-checkout')).toBeUndefined();
    expect(await axeViolations('#routes-view')).toEqual([]);
  });

  it('lists the changes in the audit log', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.locator('#app-view').waitFor({ state: 'visible' });
    await page.getByRole('button', { name: 'Refresh audit log' }).click();
    const audit = page.locator('#audit-body');
    await audit.getByText('Applied proxy route', { exact: true }).first().waitFor();
    await audit.getByText('Deleted proxy route', { exact: true }).first().waitFor();
    expect(await audit.textContent()).toContain('inbound-checkout · created');
    expect(await cardNumbersOnPage()).toEqual([]);
    expect(stack.logs()).not.toMatch(new RegExp(`${PAN}|${REAL_LOOKING_PAN}`));
    expect(pageProblems).toEqual([]);
  });
});

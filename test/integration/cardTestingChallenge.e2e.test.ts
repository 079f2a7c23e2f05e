/**
 * The card-testing proof of work in real headless Chromium (issue 22, finding 3): once a key is
 * under pressure, Tessera's own card fields (in their iframe) and the hosted payment page's script
 * fetch a challenge, solve it with Web Crypto and send the card with the solution, so the shopper
 * still gets a token; the dashboard shows the keys under attack. The threshold is 1 here: a key's
 * first card marks it under attack.
 */
import path from 'node:path';
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { launchChromium, SCREENSHOTS, startMerchantSite, tesseraJsIntegrity, type MerchantSite } from './browser';
import { apiClient, startRedis, startStack, type RedisServer, type Stack } from './harness';

jest.setTimeout(180_000);

/** The page's globals, for functions evaluated inside the browser (tests compile without the DOM lib). */
declare const window: any;

const PAN = '4242424242424242';
const OPERATOR = { email: 'ops@shop.test', password: 'correct-horse-battery' };
const EXPIRY_TYPED = `12${String(new Date().getUTCFullYear() + 4).slice(2)}`;

let redis: RedisServer;
let stack: Stack;
let browser: Browser;
let context: BrowserContext;
let merchant: MerchantSite;
let fieldsOrigin = '';
let publishableKey = '';
let secretKey = '';

/** A merchant's checkout with the card fields; the outcome of tokenize() lands in window.result. */
function checkoutPage(integrity: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Checkout</title></head><body><main>
<div id="card"></div><button id="pay" type="button">Pay</button>
</main>
<script src="${fieldsOrigin}/js/v1/tessera.js" integrity="${integrity}" crossorigin="anonymous"></script>
<script>
window.ready = false;
var card = Tessera(${JSON.stringify(publishableKey)}).cardFields({ container: '#card' });
card.on('ready', function () { window.ready = true; });
document.getElementById('pay').addEventListener('click', function () {
  window.result = undefined;
  card.tokenize().then(function (r) { window.result = r; }, function (e) { window.result = { error: e.code }; });
});
</script>
</body></html>`;
}

beforeAll(async () => {
  const integrity = tesseraJsIntegrity();
  merchant = await startMerchantSite((url) =>
    url.startsWith('/checkout/done')
      ? '<!doctype html><html lang="en"><head><title>Shop</title></head><body>done</body></html>'
      : checkoutPage(integrity),
  );
  redis = await startRedis();
  stack = await startStack(redis, { env: { BROWSER_TOKENS_PER_KEY_PER_MINUTE: '1' } });
  fieldsOrigin = stack.fieldsUrl;
  publishableKey = stack.createPublishableKey('shop', [merchant.origin]).apiKey;
  secretKey = stack.createKey('shop').apiKey;
  stack.cli(['return-urls', 'set', '--merchant', 'shop', `${merchant.origin}/checkout/done`]);
  stack.createOperator(OPERATOR.email, OPERATOR.password, 'shop');
  browser = await launchChromium();
  context = await browser.newContext();
});

afterAll(async () => {
  await browser?.close();
  await merchant?.close();
  await stack?.stop();
  await redis?.stop();
});

/** Every request the page and its frames make, with its headers and body. */
function recordRequests(page: Page): Request[] {
  const requests: Request[] = [];
  page.on('request', (request) => void requests.push(request));
  return requests;
}

describe('the card fields under card-testing pressure', () => {
  it('solve the challenge in the iframe and hand the page a token, where a card without work is asked for it', async () => {
    const page = await context.newPage();
    const requests = recordRequests(page);
    await page.goto(merchant.origin);
    await page.waitForFunction(() => window.ready === true);
    const frame = page.frames().find((f) => f.url().startsWith(`${fieldsOrigin}/fields/v1/card`))!;
    await frame.getByLabel('Card number').pressSequentially(PAN);
    await frame.getByLabel('Expiry date (MM / YY)').pressSequentially(EXPIRY_TYPED);
    await frame.getByLabel('Security code').pressSequentially('123');
    // The key's first card: no work yet (it marks the key under attack).
    await page.locator('#pay').click();
    await page.waitForFunction(() => window.result !== undefined, undefined, { timeout: 30_000 });
    expect(await page.evaluate(() => window.result.token)).toMatch(/^tok\./);
    expect(requests.some((r) => r.url().endsWith('/v1/browser/challenge'))).toBe(false);
    // Under attack now: the fields are answered challenge_required, fetch and solve a challenge, and send the card again.
    await page.locator('#pay').click();
    await page.waitForFunction(() => window.result !== undefined, undefined, { timeout: 60_000 });
    const result = await page.evaluate(() => window.result);
    expect(result.token).toMatch(/^tok\./);
    expect(result.card).toMatchObject({ brand: 'visa', last4: '4242' });
    const posts = requests.filter((r) => r.method() === 'POST' && r.url().endsWith('/v1/browser/tokens'));
    const solved = await Promise.all(posts.map((r) => r.allHeaders().then((h) => h['x-tessera-challenge'])));
    expect(solved.map((s) => s !== undefined)).toEqual([false, false, true]);
    expect(requests.filter((r) => r.method() === 'GET' && r.url().endsWith('/v1/browser/challenge'))).toHaveLength(1);
    // The merchant's server sees an ordinary provisional token.
    const record = await apiClient(stack, secretKey)('GET', `/v1/token/${result.token}`);
    expect(record.body).toMatchObject({ provisional: true, last4: '4242' });
    await page.close();
  });
});

describe('the hosted payment page under card-testing pressure', () => {
  async function payOnHostedPage(page: Page): Promise<URL> {
    const session = await apiClient(stack, secretKey)('POST', '/v1/form-sessions', { returnUrl: `${merchant.origin}/checkout/done` });
    expect(session.status).toBe(201);
    await page.goto(session.body.url);
    await page.getByLabel('Card number').pressSequentially(PAN);
    await page.getByLabel('Expiry date (MM / YY)').pressSequentially(EXPIRY_TYPED);
    await page.getByLabel('Security code').pressSequentially('046');
    await Promise.all([
      page.waitForURL((u) => u.origin === merchant.origin, { timeout: 60_000 }),
      page.getByRole('button', { name: 'Pay' }).click(),
    ]);
    return new URL(page.url());
  }

  it("solves the session's challenge in the page's script before the form is sent, and the shopper lands back at the shop", async () => {
    const page = await context.newPage();
    const requests = recordRequests(page);
    // The secret key's first hosted card marks it under attack; the second needs the work.
    for (let i = 0; i < 2; i++) expect((await payOnHostedPage(page)).pathname).toBe('/checkout/done');
    const challenges = requests.filter((r) => r.method() === 'GET' && /\/pay\/[^/]+\/challenge$/.test(r.url()));
    expect(challenges).toHaveLength(2);
    const cardPosts = requests.filter((r) => r.method() === 'POST' && /\/pay\/[^/]+$/.test(r.url()));
    const solutions = cardPosts.map((r) => new URLSearchParams(r.postData() ?? '').get('challenge'));
    // The first page was not asked for work (the key was quiet), the second sent its solution.
    expect(solutions[0]).toBe('');
    expect(solutions[1]).toMatch(/^[A-Za-z0-9+/=]{40,}$/);
    await page.close();
  });
});

describe('the dashboard during the attack', () => {
  it('shows a banner naming the keys under attack, and marks their rows', async () => {
    const page = await context.newPage();
    await page.goto(`${stack.adminUrl}/dashboard`);
    await page.getByLabel('Email').fill(OPERATOR.email);
    await page.getByLabel('Password').fill(OPERATOR.password);
    await page.getByLabel('Password').press('Enter');
    await page.locator('#attack-banner').waitFor({ state: 'visible' });
    const banner = (await page.locator('#attack-banner').textContent()) ?? '';
    expect(banner).toMatch(/Card-testing attack\./);
    expect(banner).toMatch(/Checkouts go on: each card now needs a proof of work/);
    // Both keys the shoppers' cards came with: the publishable key (card fields) and the secret key that opened the hosted pages.
    for (const key of [publishableKey, secretKey]) {
      const shown = `${key.slice(0, key.lastIndexOf('_') + 5)}…${key.slice(-4)}`;
      expect(banner).toContain(shown);
    }
    expect(await page.locator('#keys-body .badge-attack').count()).toBe(2);
    await page.locator('main').screenshot({ path: path.join(SCREENSHOTS, 'dashboard-card-testing-attack.png') });
    await page.close();
  });
});

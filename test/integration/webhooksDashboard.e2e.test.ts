/**
 * The dashboard's Webhooks page in a real browser (Debian's chromium driven by playwright-core):
 * an operator adds an endpoint and sees its signing secret once, rotates it, enables it again after
 * delivery disabled it, sees its deliveries and resends one, and deletes it; every change lands in
 * the audit log without the secret, and the page passes axe.
 */
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { Redis } from 'ioredis';
import type { Browser, Page } from 'playwright-core';
import { buildEvent, RedisEventStore, RedisWebhookDeliveryStore, RedisWebhookEndpointStore, webhookSecret } from '@tessera/merchant-data';
import { collectPageProblems, launchChromium, SCREENSHOTS } from './browser';
import { startRedis, startStack, type RedisServer, type Stack } from './harness';

jest.setTimeout(120_000);

/** The page's globals, for the functions evaluated inside the browser (tests compile without the DOM lib). */
declare const document: {
  activeElement: unknown;
  querySelector(selector: string): { textContent: string | null } | null;
  querySelectorAll(
    selector: string,
  ): Iterable<{ id: string; outerHTML: string; labels: { length: number } | null; getAttribute(name: string): string | null }>;
};

const OPERATOR = { email: 'ops@acme.test', password: 'correct-horse-battery' };
const URL = 'https://shop.example/tessera-events';

let redis: RedisServer;
let stack: Stack;
let browser: Browser;
let page: Page;
let client: Redis;
let endpoints: RedisWebhookEndpointStore;
let pageProblems: string[] = [];

async function screenshot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

async function axeViolations(selector: string): Promise<string[]> {
  const result = await new AxeBuilder({ page }).include(selector).analyze();
  return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

function entry(url: string = URL) {
  return page.locator('.webhook-entry', { has: page.locator('h3', { hasText: url }) });
}

async function shownSecret(): Promise<string> {
  await page.locator('#webhook-secret').waitFor({ state: 'visible' });
  return ((await page.locator('#webhook-secret-value').textContent()) ?? '').trim();
}

beforeAll(async () => {
  redis = await startRedis();
  stack = await startStack(redis);
  stack.createOperator(OPERATOR.email, OPERATOR.password, 'acme');
  client = new Redis(redis.url);
  endpoints = new RedisWebhookEndpointStore(client);
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  page = await context.newPage();
  page.setDefaultTimeout(15_000);
  // 400 (a refused URL) and 401 (the session probe) are expected answers.
  pageProblems = collectPageProblems(page, /status of 40[01]/);
});

afterAll(async () => {
  await browser?.close();
  client?.disconnect();
  await stack?.stop();
  await redis?.stop();
});

describe('the Webhooks page', () => {
  let endpointId = '';
  let firstSecret = '';

  it('opens from the navigation once signed in, with every control labelled', async () => {
    await page.goto(`${stack.adminUrl}/dashboard/`);
    await page.getByLabel('Email').fill(OPERATOR.email);
    await page.getByLabel('Password').fill(OPERATOR.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#app-view').waitFor({ state: 'visible' });
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.locator('#webhooks-view').waitFor({ state: 'visible' });
    expect(await page.getByRole('link', { name: 'Webhooks' }).getAttribute('aria-current')).toBe('page');
    expect(await page.locator('#app-view').isHidden()).toBe(true);
    await page.getByText('No endpoints in this mode yet.').waitFor();
    await page.getByRole('checkbox', { name: 'token.created' }).waitFor();
    const unlabelled = await page.evaluate(() =>
      [...document.querySelectorAll('#webhooks-view input, #webhooks-view select, dialog select')]
        .filter((el) => (el.labels?.length ?? 0) === 0 && !el.getAttribute('aria-label'))
        .map((el) => el.id || el.outerHTML),
    );
    expect(unlabelled).toEqual([]);
  });

  it('refuses an http URL for a live endpoint next to the field', async () => {
    await page.getByLabel('Mode').selectOption('live');
    await page.getByLabel('Endpoint URL').fill('http://shop.example/tessera-events');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.locator('#webhook-url-error').getByText('"url" must be https:// for a live key.').waitFor();
    expect(await page.getByLabel('Endpoint URL').getAttribute('aria-invalid')).toBe('true');
    expect(await endpoints.list('acme', 'live')).toEqual([]);
    await page.getByLabel('Mode').selectOption('test');
  });

  it('adds an endpoint and shows its signing secret exactly once, with a copy button', async () => {
    await page.getByLabel('Endpoint URL').fill(URL);
    await page.getByRole('checkbox', { name: 'token.deleted' }).check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    firstSecret = await shownSecret();
    const [stored] = await endpoints.list('acme', 'test');
    endpointId = stored!.id;
    expect(stored).toMatchObject({ url: URL, enabledEvents: ['form_session.completed', 'token.created', 'token.deleted'] });
    // The secret the delivery worker signs with: derived from the stack's pepper, never stored.
    expect(firstSecret).toBe(webhookSecret(stack.env.API_KEY_PEPPER as string, 'acme', 'test', endpointId, 1));
    const keys = await client.keys('tessera:webhooks:*');
    const values = await Promise.all(keys.map(async (key) => ((await client.type(key)) === 'string' ? client.get(key) : '')));
    expect(values.join('\n')).toContain(endpointId);
    expect(values.join('\n')).not.toContain('whsec_');
    await page.getByRole('button', { name: 'Copy' }).click();
    await page
      .locator('#webhook-copy-status')
      .getByText(/Copied|Selected/)
      .waitFor();
    await screenshot('webhooks-01-secret-shown-once');
    expect(await axeViolations('#webhooks-view')).toEqual([]);

    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await page.locator('#webhook-secret').isHidden()).toBe(true);
    expect(await page.content()).not.toContain(firstSecret);
    const shown = entry();
    await shown.getByText('Enabled', { exact: true }).waitFor();
    await shown.getByText('token.deleted', { exact: true }).waitFor();
    await shown.getByText(endpointId).waitFor();
  });

  it('rotates the secret with an overlap: a new secret once, and until when the old one signs', async () => {
    await page.getByRole('button', { name: `Rotate the signing secret of ${URL}` }).click();
    await page.locator('#webhook-rotate-dialog').waitFor({ state: 'visible' });
    expect(await axeViolations('#webhook-rotate-dialog')).toEqual([]);
    await page.getByLabel('Current secret keeps signing for').selectOption('3600');
    await page.getByRole('button', { name: 'Make new secret' }).click();
    const second = await shownSecret();
    expect(second).toBe(webhookSecret(stack.env.API_KEY_PEPPER as string, 'acme', 'test', endpointId, 2));
    expect(await page.locator('#webhook-secret-title').textContent()).toContain(`New signing secret of ${URL}`);
    await entry()
      .getByText(/previous secret signs until/)
      .waitFor();
    const stored = await endpoints.get('acme', 'test', endpointId);
    expect(stored?.secrets.map((s) => s.generation)).toEqual([2, 1]);
    // Another mode's page does not keep showing this endpoint's secret.
    await page.getByLabel('Mode').selectOption('live');
    await page.locator('#webhook-secret').waitFor({ state: 'hidden' });
    expect(await page.content()).not.toContain(second);
    await page.getByLabel('Mode').selectOption('test');
    await entry().waitFor();
  });

  it('shows an endpoint delivery disabled, and enables it again', async () => {
    await endpoints.setStatus('acme', 'test', endpointId, 'disabled', 'failing_since:2026-11-23T12:00:00.000Z');
    await page.getByRole('button', { name: 'Refresh webhooks' }).click();
    await entry().getByText('Disabled', { exact: true }).waitFor();
    await entry()
      .getByText(/Every delivery failed since/)
      .waitFor();
    await screenshot('webhooks-02-disabled');
    expect(await axeViolations('#webhooks-view')).toEqual([]);
    await page.getByRole('button', { name: `Enable ${URL}` }).click();
    await entry().getByText('Enabled', { exact: true }).waitFor();
    expect((await endpoints.get('acme', 'test', endpointId))?.status).toBe('enabled');
  });

  it('shows the endpoint’s recent deliveries with outcome, response code and latency, and resends one', async () => {
    const deliveries = new RedisWebhookDeliveryStore(client);
    const event = buildEvent({ type: 'token.created', merchantId: 'acme', mode: 'test', object: { id: 'tok_aaaaaaaa', last4: '4242' } });
    await new RedisEventStore(client).record(event);
    const at = new Date();
    const next = new Date(at.getTime() + 60_000);
    // As the dispatcher logs them: a 503, then a 200.
    const attempt = { eventId: event.id, type: event.type, at: at.toISOString() };
    await deliveries.recordFailure(
      'acme',
      endpointId,
      { ...attempt, attempt: 1, outcome: 'failed', status: 503, latencyMs: 120, nextAttemptAt: next.toISOString() },
      next.getTime(),
      at,
    );
    await deliveries.recordSuccess('acme', endpointId, { ...attempt, attempt: 2, outcome: 'succeeded', status: 200, latencyMs: 35 });

    await page.getByRole('button', { name: 'Refresh webhooks' }).click();
    const rows = entry().locator('tbody tr');
    await rows.first().getByText('Delivered').waitFor();
    expect(await rows.count()).toBe(2);
    expect(((await rows.nth(0).textContent()) ?? '').replace(/\s+/g, ' ')).toMatch(
      new RegExp(`${event.id}token\\.created2Delivered20035 ms`),
    );
    expect(((await rows.nth(1).textContent()) ?? '').replace(/\s+/g, ' ')).toMatch(/1Failed, will retrynext try .*503120 ms/);
    await screenshot('webhooks-03-deliveries');
    expect(await axeViolations('#webhooks-view')).toEqual([]);

    await entry().getByText('Nothing waits in its queue.').waitFor();
    // One Resend per event, on its newest attempt.
    const resendButton = entry().getByRole('button', { name: `Resend ${event.id} to ${URL}` });
    expect(await resendButton.count()).toBe(1);
    await resendButton.click();
    await page.locator('#toast').getByText(`${event.id} is queued for ${URL} again.`).waitFor();
    await entry()
      .getByText(/^Waiting in its queue: 1 event, the oldest created /)
      .waitFor();
    expect(await resendButton.evaluate((el) => el === document.activeElement)).toBe(true);
    expect((await deliveries.queueHead('acme', endpointId, 10)).map((d) => d.eventId)).toEqual([event.id]);
  });

  it('closes the delete confirmation with Escape, keeping the endpoint; then deletes it', async () => {
    const remove = page.getByRole('button', { name: `Delete ${URL}` });
    await remove.click();
    await page.locator('#webhook-delete-dialog').waitFor({ state: 'visible' });
    expect(await axeViolations('#webhook-delete-dialog')).toEqual([]);
    await page.keyboard.press('Escape');
    await page.locator('#webhook-delete-dialog').waitFor({ state: 'hidden' });
    expect(await remove.evaluate((el) => el === document.activeElement)).toBe(true);
    expect(await endpoints.get('acme', 'test', endpointId)).toBeDefined();

    await remove.click();
    await page.getByRole('button', { name: 'Delete endpoint' }).click();
    await page.locator('#webhook-delete-dialog').waitFor({ state: 'hidden' });
    await page.getByText('No endpoints in this mode yet.').waitFor();
    expect(await endpoints.get('acme', 'test', endpointId)).toBeUndefined();
  });

  it('lists every change in the audit log, without a secret', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.locator('#app-view').waitFor({ state: 'visible' });
    await page.getByRole('button', { name: 'Refresh audit log' }).click();
    const audit = page.locator('#audit-body');
    for (const action of [
      'Added webhook endpoint',
      'Rotated webhook secret',
      'Enabled webhook endpoint',
      'Resent webhook event',
      'Deleted webhook endpoint',
    ]) {
      await audit.getByText(action, { exact: true }).first().waitFor();
    }
    const text = (await audit.textContent()) ?? '';
    expect(text).toContain(URL);
    expect(text).not.toContain('whsec_');
    expect(pageProblems).toEqual([]);
  });
});

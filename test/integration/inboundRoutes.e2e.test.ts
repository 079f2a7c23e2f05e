/**
 * Issue 28 (ADR 0013 point 1, docs/proxies.md "Inbound routes"): a merchant points its checkout
 * form and its partners' API at an inbound route on INBOUND_PORT; Tessera takes the card out,
 * stores it, puts aliases in the formats the route names where the card was, and sends the
 * request on to the merchant's server through the proxy, whose answer comes back unchanged. The
 * merchant's server never receives a card number. Real processes over mutual TLS (vault, proxy,
 * inbound, gateway, admin), real Redis, a real Chromium posting a real form, the routes applied
 * with the real `npm run routes` CLI, and a stand-in merchant server on loopback that records
 * every request it gets and writes a log, as a merchant's server would. The merchant later charges
 * the card by the alias it received, through an outbound route and the forward proxy, at the
 * sandbox PSP over HTTPS (its host name answered by a fake DNS server on loopback).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { isLuhnValid } from '@tessera/common';
import { ROOT } from '@tessera/stack';
import { findCardDataInLogs, freePort, TEST_CARDS, TEST_CVV, useStack } from './harness';
import { loggedIn } from './adminClient';
import { launchChromium } from './browser';
import { chargeWithStripeSdk, downloadForwardProxyCa, forwardProxyUrl, useSandboxPspOverTls } from './forwardProxyClient';
import { sample, scrape } from './metricsScrape';

jest.setTimeout(180_000);

const PSP_HOST = 'psp.test';
const sandbox = useSandboxPspOverTls({ hosts: [PSP_HOST], resolve: (name) => (name === PSP_HOST ? '127.0.0.1' : undefined) });
// METRICS_PORT 0: each service picks a free port for its metrics and logs it.
const env = useStack(() => ({ tls: true, inbound: true, psp: true, serviceEnv: sandbox.serviceEnv(), env: { METRICS_PORT: '0' } }));
const MERCHANT = 'm_inbound_shop';
const OTHER_MERCHANT = 'm_inbound_rival';
const PAN = TEST_CARDS.visa;
const OTHER_PAN = TEST_CARDS.mastercard;
const EXPIRY_YEAR = new Date().getUTCFullYear() + 3;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * The merchant's server: records what it gets and logs each order as a careless server would
 * (the whole body), answers with a status, headers and body of its own that the test compares
 * with what the sender got. GET /form is its checkout page, whose form posts to the inbound route.
 */
class MerchantServer {
  readonly received: Received[] = [];
  readonly log: string[] = [];
  formAction = '';
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (req.url === '/favicon.ico') {
        res.writeHead(404).end();
        return;
      }
      if (req.url === '/form') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(`<!doctype html><title>Checkout</title>
<form method="post" action="${this.formAction}">
  <input name="card[name]" id="name"> <input name="card[number]" id="number">
  <input name="card[exp]" id="exp"> <input name="card[cvc]" id="cvc">
  <input type="hidden" name="order" value="ord_42">
  <button id="pay" type="submit">Pay</button>
</form>`);
        return;
      }
      this.received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      this.log.push(`${new Date().toISOString()} ${req.method} ${req.url} order received: ${body}`);
      const html = (req.headers['content-type'] ?? '').includes('form');
      res.statusCode = 201;
      res.setHeader('content-type', html ? 'text/html; charset=utf-8' : 'application/json');
      res.setHeader('x-merchant-order', 'ord_42');
      res.setHeader('set-cookie', ['session=abc; HttpOnly', 'cart=empty']);
      res.end(
        html ? '<!doctype html><title>Thanks</title><h1>Thank you for your order</h1>' : JSON.stringify({ order: 'ord_42', ok: true }),
      );
    });
  });
  origin = '';

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.origin = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Everything it holds: what it received (headers and bodies) and its log. */
  everything(): string {
    return JSON.stringify(this.received) + '\n' + this.log.join('\n');
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const merchant = new MerchantServer();
let dir: string;
let browser: Browser;

/** `npm run routes`, the admin service's CLI, as an operator runs it. */
function routesCli(args: string[]): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, [path.join(ROOT, 'services/admin/dist/cli/routes.js'), ...args], {
    cwd: ROOT,
    env: env.stack.env,
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

function routesFile(name: string, text: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

/** A request to INBOUND_PORT with whatever Host header it names (fetch cannot set one). */
function inboundRequest(
  method: string,
  target: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const url = new URL(env.stack.inboundUrl);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path: target, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const postJson = (target: string, value: unknown) =>
  inboundRequest('POST', target, { 'content-type': 'application/json' }, JSON.stringify(value));

const cardJson = (extra: Record<string, unknown> = {}) => ({
  amount: 1999,
  card: { number: PAN, exp_month: 12, exp_year: EXPIRY_YEAR, cvc: TEST_CVV },
  ...extra,
});

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-inbound-it-'));
  await merchant.start();
  merchant.formAction = `${env.stack.inboundUrl}/checkout/form-post`;
  // Nothing listens there: the upstream of a route whose server is down.
  const closedPort = await freePort();
  const applied = routesCli([
    'apply',
    '--merchant',
    MERCHANT,
    '--file',
    routesFile(
      'routes.yaml',
      `id: checkout
kind: inbound
mode: test
inbound:
  path: /checkout
  upstream: ${merchant.origin}/orders
filters:
  - { location: json, pointer: /card/number, store: number, aliasFormat: card_bin_last4 }
  - { location: json, pointer: /card/exp_month, store: expiry_month }
  - { location: json, pointer: /card/exp_year, store: expiry_year }
  - { location: json, pointer: /card/cvc, store: cvv }
  - { location: form, field: "card[number]", store: number, aliasFormat: uuid }
  - { location: form, field: "card[exp]", store: expiry }
  - { location: form, field: "card[cvc]", store: cvv }
  - { location: form, field: "card[name]", store: holder }
unmatchedCardData: refuse
---
id: notes
kind: inbound
mode: test
inbound:
  path: /notes
  upstream: ${merchant.origin}/notes
filters:
  - { location: json, pointer: /card/number, store: number, aliasFormat: card_last4 }
  - { location: json, pointer: /card/exp_month, store: expiry_month }
  - { location: json, pointer: /card/exp_year, store: expiry_year }
unmatchedCardData: redact
---
id: hosted
kind: inbound
mode: test
inbound:
  host: pay.shop.example
  upstream: ${merchant.origin}/hosted
filters:
  - { location: json, pointer: /card/number, store: number, aliasFormat: token }
  - { location: json, pointer: /card/exp_month, store: expiry_month }
  - { location: json, pointer: /card/exp_year, store: expiry_year }
---
id: down
kind: inbound
mode: test
inbound:
  path: /down
  upstream: http://127.0.0.1:${closedPort}/down
filters:
  - { location: json, pointer: /card/number, store: number }
`,
    ),
  ]);
  expect(applied).toMatchObject({ status: 0 });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await merchant.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('an inbound route', () => {
  it('turns a JSON API call into one with a BIN+last4 alias, and hands back the merchant’s answer unchanged', async () => {
    const before = merchant.received.length;
    const answer = await postJson('/checkout/api?ref=42', cardJson());

    expect(answer.status).toBe(201);
    expect(JSON.parse(answer.body)).toEqual({ order: 'ord_42', ok: true });
    expect(answer.headers['x-merchant-order']).toBe('ord_42');
    expect(answer.headers['set-cookie']).toEqual(['session=abc; HttpOnly', 'cart=empty']);
    expect(answer.headers['x-tessera-error']).toBeUndefined();

    const got = merchant.received.slice(before);
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ method: 'POST', url: '/orders/api?ref=42' });
    const body = JSON.parse(got[0]!.body) as { amount: number; card: { number: string; exp_month: number; exp_year: number; cvc: string } };
    expect(body.amount).toBe(1999);
    expect(body.card.number).toMatch(/^424242\d{6}4242$/);
    expect(body.card.number).not.toBe(PAN);
    expect(isLuhnValid(body.card.number)).toBe(true);
    expect(body.card.cvc).toMatch(/^tok\./);
    expect(body.card).toMatchObject({ exp_month: 12, exp_year: EXPIRY_YEAR });
    expect(got[0]!.headers['x-forwarded-for']).toBe('127.0.0.1');
  });

  it('turns a card form posted by Chromium into one with a UUID alias, and the shopper sees the merchant’s page', async () => {
    const before = merchant.received.length;
    const page = await browser.newPage();
    try {
      await page.goto(`${merchant.origin}/form`);
      await page.fill('#name', 'Ada Lovelace');
      await page.fill('#number', '4242 4242 4242 4242');
      await page.fill('#exp', `12/${String(EXPIRY_YEAR).slice(2)}`);
      await page.fill('#cvc', TEST_CVV);
      await Promise.all([page.waitForURL(`${env.stack.inboundUrl}/checkout/form-post`), page.click('#pay')]);
      expect(await page.textContent('h1')).toBe('Thank you for your order');
    } finally {
      await page.close();
    }
    const got = merchant.received.slice(before);
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ method: 'POST', url: '/orders/form-post' });
    expect(got[0]!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const form = new URLSearchParams(got[0]!.body);
    expect(form.get('card[number]')).toMatch(UUID);
    expect(form.get('card[cvc]')).toMatch(/^tok\./);
    expect(form.get('card[name]')).toBe('Ada Lovelace');
    expect(form.get('card[exp]')).toBe(`12/${String(EXPIRY_YEAR).slice(2)}`);
    expect(form.get('order')).toBe('ord_42');
  });

  it('lets the merchant charge the stored card with the alias through /v1/proxy and a secret key', async () => {
    const before = merchant.received.length;
    await postJson('/checkout/charge-later', cardJson());
    const alias = (JSON.parse(merchant.received[before]!.body) as { card: { number: string } }).card.number;
    const key = env.stack.createKey(MERCHANT, 'test');
    env.psp.reset();
    const res = await fetch(`${env.stack.baseUrl}/v1/proxy`, {
      method: 'POST',
      headers: { 'x-api-key': key.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({
        method: 'post',
        token: alias,
        pspUrl: `${env.psp.url}/v1/charges`,
        pspHeaders: { 'content-type': 'application/json' },
        pspBody: '{"number":"[CARD_NUMBER]","cvc":"[CARD_CVV]","exp":"[CARD_EXPIRY_MONTH]/[CARD_EXPIRY_YEAR]"}',
      }),
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(env.psp.requests[0]!.body.toString('utf8'))).toEqual({ number: PAN, cvc: TEST_CVV, exp: `12/${EXPIRY_YEAR}` });
  });

  it('lets the merchant charge the stored card later through an outbound route and the forward proxy, by the alias its server received', async () => {
    const before = merchant.received.length;
    expect((await postJson('/checkout/charge-by-alias', cardJson())).status).toBe(201);
    const alias = (JSON.parse(merchant.received[before]!.body) as { card: { number: string } }).card.number;
    expect(alias).toMatch(/^424242\d{6}4242$/);
    expect(alias).not.toBe(PAN);

    const applied = routesCli([
      'apply',
      '--merchant',
      MERCHANT,
      '--file',
      routesFile(
        'outbound.yaml',
        `id: sandbox-psp\nkind: outbound\nmode: test\noutbound: { hosts: [${PSP_HOST}] }\nfilters: [{ location: form, field: "card[number]", store: number }]\n`,
      ),
    ]);
    expect(applied).toMatchObject({ status: 0 });
    const key = env.stack.createKey(MERCHANT, 'test');
    const caFile = path.join(dir, 'forward-proxy-ca.pem');
    await downloadForwardProxyCa(env.stack, key.apiKey, caFile);

    const stdout = await chargeWithStripeSdk({
      proxyUrl: forwardProxyUrl(sandbox.forwardProxyPort, key.apiKey),
      caFile,
      host: PSP_HOST,
      port: sandbox.port,
      cardNumber: alias,
    });
    // The sandbox approves published test cards only, and an alias is never one: it got the card.
    expect(JSON.parse(stdout)).toMatchObject({ object: 'charge', status: 'succeeded', amount: 1000, card: { last4: '4242' } });
    expect(stdout).not.toContain(PAN);
  });

  it('passes a request without card data through unchanged', async () => {
    const before = merchant.received.length;
    const body = '{"amount": 5, "note":  "no card here", "order": 123456}';
    const answer = await inboundRequest(
      'PUT',
      '/checkout/cart/7?view=full&x=%20y',
      { 'content-type': 'application/json', 'x-shop': 'yes' },
      body,
    );
    expect(answer.status).toBe(201);
    expect(merchant.received.slice(before)).toMatchObject([
      { method: 'PUT', url: '/orders/cart/7?view=full&x=%20y', body, headers: { 'x-shop': 'yes', 'content-type': 'application/json' } },
    ]);
    const get = await inboundRequest('GET', '/checkout', {});
    expect(get.status).toBe(201);
    expect(merchant.received.at(-1)).toMatchObject({ method: 'GET', url: '/orders', body: '' });
  });

  it('refuses card data in a place no filter names, forwarding nothing (unmatchedCardData: refuse)', async () => {
    const before = merchant.received.length;
    for (const request of [
      postJson('/checkout', cardJson({ note: `my other card: ${OTHER_PAN.replace(/(\d{4})/g, '$1 ')}` })),
      postJson('/checkout', { amount: 1, comment: `card ${PAN}` }),
      inboundRequest('GET', `/checkout?card=${OTHER_PAN}`, {}),
    ]) {
      const answer = await request;
      expect(answer.status).toBe(400);
      expect(answer.headers['x-tessera-error']).toBe('card_data_unmatched');
      expect(JSON.parse(answer.body)).toMatchObject({ error: { type: 'invalid_request_error', code: 'card_data_unmatched' } });
    }
    expect(merchant.received.length).toBe(before);
  });

  it('refuses two different card numbers in one request: one card per request', async () => {
    const before = merchant.received.length;
    const form = new URLSearchParams([
      ['card[number]', PAN],
      ['card[number]', OTHER_PAN],
      ['card[exp]', '12/30'],
    ]).toString();
    const answer = await inboundRequest('POST', '/checkout', { 'content-type': 'application/x-www-form-urlencoded' }, form);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'multiple_cards' } });
    expect(merchant.received.length).toBe(before);
  });

  it('redacts card data in a place no filter names when the route says so', async () => {
    const before = merchant.received.length;
    const answer = await postJson('/notes', {
      card: { number: PAN, exp_month: 12, exp_year: EXPIRY_YEAR },
      note: `call me about ${OTHER_PAN}, thanks`,
    });
    expect(answer.status).toBe(201);
    const body = JSON.parse(merchant.received[before]!.body) as { note: string; card: { number: string } };
    expect(body.note).toBe('call me about [redacted], thanks');
    expect(body.card.number).toMatch(/^\d{12}4242$/);
    expect(body.card.number).not.toBe(PAN);
    expect(isLuhnValid(body.card.number)).toBe(true);
  });

  it('serves a host route by the request’s Host header', async () => {
    const before = merchant.received.length;
    const answer = await inboundRequest(
      'POST',
      '/pay?session=9',
      { host: 'pay.shop.example', 'content-type': 'application/json' },
      JSON.stringify({ card: { number: PAN, exp_month: 12, exp_year: EXPIRY_YEAR } }),
    );
    expect(answer.status).toBe(201);
    const got = merchant.received[before]!;
    expect(got.url).toBe('/hosted/pay?session=9');
    expect(got.headers['x-forwarded-host']).toBe('pay.shop.example');
    expect((JSON.parse(got.body) as { card: { number: string } }).card.number).toMatch(/^tok\./);
  });

  it('answers 404 in the error envelope where no route is', async () => {
    const before = merchant.received.length;
    const answer = await postJson('/nowhere', cardJson());
    expect(answer.status).toBe(404);
    expect(answer.headers['x-tessera-error']).toBe('route_not_found');
    expect(JSON.parse(answer.body)).toMatchObject({
      error: { type: 'not_found_error', code: 'route_not_found', requestId: expect.any(String) },
    });
    expect((await postJson('/checkouts', cardJson())).status).toBe(404);
    expect(merchant.received.length).toBe(before);
  });

  it('answers 413 for a body over INBOUND_MAX_BODY_BYTES, and 502 when the upstream cannot be reached, both in the envelope', async () => {
    const before = merchant.received.length;
    const big = await inboundRequest('POST', '/checkout', { 'content-type': 'text/plain' }, 'x'.repeat(1024 * 1024 + 1));
    expect({ status: big.status, code: big.headers['x-tessera-error'] }).toEqual({ status: 413, code: 'body_too_large' });
    const down = await postJson('/down', { amount: 1 });
    expect({ status: down.status, code: down.headers['x-tessera-error'] }).toEqual({ status: 502, code: 'psp_unreachable' });
    expect(JSON.parse(down.body)).toMatchObject({ error: { code: 'psp_unreachable', requestId: expect.any(String) } });
    expect(merchant.received.length).toBe(before);
  });

  it('has the admin API refuse a route on a path another merchant’s route serves: 409 naming it', async () => {
    env.stack.createOperator('platform@inbound.test', 'a long platform passphrase', null);
    const admin = await loggedIn(env.stack.adminUrl, 'platform@inbound.test', 'a long platform passphrase');
    const res = await admin.call('PUT', `/merchants/${OTHER_MERCHANT}/routes/rival`, {
      id: 'rival',
      kind: 'inbound',
      mode: 'test',
      inbound: { path: '/checkout', upstream: 'https://rival.example/' },
      filters: [{ location: 'text', pattern: 'card_number', store: 'number' }],
    });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: { code: 'proxy_route_address_taken', param: 'inbound.path' } });
    expect(JSON.stringify(res.body)).toContain('/checkout');
  });

  it('refuses another merchant’s route on a path or host already served, with a clear error', () => {
    const taken = routesCli([
      'apply',
      '--merchant',
      OTHER_MERCHANT,
      '--file',
      routesFile(
        'rival.yaml',
        `id: rival\nkind: inbound\nmode: test\ninbound: { path: /checkout/, upstream: https://rival.example/ }\nfilters: [{ location: text, pattern: card_number, store: number }]\n`,
      ),
    ]);
    expect(taken.status).not.toBe(0);
    expect(taken.output).toContain('already serves the path /checkout');
    const host = routesCli([
      'apply',
      '--merchant',
      OTHER_MERCHANT,
      '--file',
      routesFile(
        'rival-host.yaml',
        `id: rival\nkind: inbound\nmode: test\ninbound: { host: pay.shop.example, upstream: https://rival.example/ }\nfilters: [{ location: text, pattern: card_number, store: number }]\n`,
      ),
    ]);
    expect(host.status).not.toBe(0);
    expect(host.output).toContain('already serves the host pay.shop.example');
  });

  it('counts inbound requests and forward-proxy charges in Prometheus, by outcome, with no card, merchant or path', async () => {
    const inbound = await scrape(env.stack.inbound!);
    const gateway = await scrape(env.stack.gateway);
    expect(sample(inbound, 'tessera_inbound_requests_total', { outcome: 'forwarded_card', status: '201' })).toBeGreaterThan(0);
    expect(sample(inbound, 'tessera_inbound_requests_total', { outcome: 'card_data_unmatched', status: '400' })).toBe(3);
    expect(sample(inbound, 'tessera_inbound_requests_total', { outcome: 'route_not_found', status: '404' })).toBeGreaterThanOrEqual(2);
    expect(sample(gateway, 'tessera_forward_proxy_requests_total', { stage: 'request', outcome: 'psp_2xx', status: '200' })).toBe(1);
    for (const text of [inbound, gateway]) {
      const ours = text
        .split('\n')
        .filter((line) => line.startsWith('tessera_'))
        .join('\n');
      for (const secret of [PAN, OTHER_PAN, MERCHANT, '/checkout', 'pay.shop.example', PSP_HOST]) {
        expect({ secret, found: ours.includes(secret) }).toEqual({ secret, found: false });
      }
      expect(ours).not.toMatch(new RegExp(`[^\\d.]${TEST_CVV}[^\\d.]`));
    }
  });

  it('left no card number or CVV in anything the merchant’s server received or logged, nor in Tessera’s logs', () => {
    expect(merchant.received.length).toBeGreaterThan(5);
    expect(findCardDataInLogs(merchant.everything(), [PAN, OTHER_PAN], [TEST_CVV])).toEqual([]);
    expect(findCardDataInLogs(env.stack.logs(), [PAN, OTHER_PAN], [TEST_CVV])).toEqual([]);
  });
});

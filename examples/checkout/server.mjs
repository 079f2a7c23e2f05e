// An example checkout with Tessera's card fields: the shopper types the card into Tessera's iframe
// (tessera.js, a publishable key), the page gets a token, and this server keeps the token with its
// secret key and charges it through Tessera's proxy at the sandbox PSP. No card number or CVC ever
// reaches this server or its page (PCI DSS SAQ A). See README.md.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Tessera, TesseraApiError } from '@tessera/sdk';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
// Where `npm start` keeps its development secrets (TESSERA_STATE_DIR, as scripts/start.mjs reads it).
// eslint-disable-next-line no-restricted-properties -- an example reads its settings from the environment
const stateFile = (name) => path.join(path.resolve(root, process.env.TESSERA_STATE_DIR ?? '.tessera'), name);
const readState = (name) => (fs.existsSync(stateFile(name)) ? fs.readFileSync(stateFile(name), 'utf8').trim() : undefined);

/* eslint-disable no-restricted-properties -- an example reads its settings from the environment */
const port = Number(process.env.PORT ?? 3001);
const config = {
  port,
  // The origin shoppers open this page at: the publishable key must allow exactly it.
  origin: process.env.EXAMPLE_ORIGIN ?? `http://127.0.0.1:${port}`,
  // The API's base URL, `/v1` included: the one meaning TESSERA_URL has in the README and every example.
  tesseraUrl: (process.env.TESSERA_URL ?? 'http://127.0.0.1:8080/v1').replace(/\/+$/, ''),
  // The admin service (dashboard and /admin/v1), a port of its own.
  adminUrl: (process.env.TESSERA_ADMIN_URL ?? 'http://127.0.0.1:8081').replace(/\/+$/, ''),
  fieldsOrigin: (process.env.FIELDS_ORIGIN ?? 'http://127.0.0.1:8082').replace(/\/+$/, ''),
  // `npm start` writes its test secret key to .tessera/dev-api-key (merchant `dev`).
  secretKey: process.env.TESSERA_API_KEY ?? readState('dev-api-key'),
  publishableKey: process.env.TESSERA_PUBLISHABLE_KEY,
  // Without a publishable key the example makes one through the admin API, as this operator.
  adminEmail: process.env.TESSERA_ADMIN_EMAIL ?? 'admin@tessera.local',
  adminPassword: process.env.TESSERA_ADMIN_PASSWORD ?? readState('dev-admin-password'),
  merchantId: process.env.TESSERA_MERCHANT ?? 'dev',
  // The SRI hash of tessera.js (published in docs/browser.md; `npm run build` writes it here too).
  integrity:
    process.env.TESSERA_JS_INTEGRITY ??
    JSON.parse(fs.readFileSync(path.join(root, 'packages/js/dist/browser/manifest.json'), 'utf8'))['tessera.js'].integrity,
  pspUrl: process.env.PSP_URL ?? 'http://127.0.0.1:8090/v1/charges',
  pspSecret: process.env.PSP_SECRET ?? 'sk_sandbox',
};
/* eslint-enable no-restricted-properties */

if (!config.secretKey) {
  console.error('No secret key: run `npm start` first (it writes .tessera/dev-api-key) or set TESSERA_API_KEY.');
  process.exit(2);
}

// The secret key stays on this server; the page only ever sees the publishable key.
const tessera = new Tessera(config.secretKey, { baseUrl: config.tesseraUrl, timeoutMs: 45_000 });

/** A test publishable key allowing this page's origin, made through the admin API (what the dashboard does). */
async function createPublishableKey() {
  if (!config.adminPassword) throw new Error('set TESSERA_PUBLISHABLE_KEY, or TESSERA_ADMIN_PASSWORD to create one');
  const admin = `${config.adminUrl}/admin/v1`;
  const login = await fetch(`${admin}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: config.adminEmail, password: config.adminPassword }),
  });
  if (login.status !== 200) throw new Error(`admin login as ${config.adminEmail} failed (${login.status})`);
  const { csrfToken } = await login.json();
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
  const created = await fetch(`${admin}/keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': csrfToken },
    body: JSON.stringify({ kind: 'publishable', mode: 'test', merchantId: config.merchantId, allowedOrigins: [config.origin] }),
  });
  if (created.status !== 201) throw new Error(`creating a publishable key failed (${created.status}): ${await created.text()}`);
  return (await created.json()).apiKey;
}

// The amount is the server's: a price the browser sent could be anything.
const ORDER = { amount: 1999, currency: 'eur', description: 'One Tessera mug' };

/** POST /pay {token}: keep the browser's provisional token, then charge it at the PSP through Tessera. */
async function pay(token) {
  // Browser tokens expire within BROWSER_TOKEN_TTL_SECONDS unless retained with the secret key;
  // a token from another merchant or a made-up one fails here (token_not_found).
  const card = await tessera.tokens.retain(token);
  const orderId = `order_${crypto.randomUUID()}`;
  const psp = await tessera.proxy.forward(
    {
      method: 'post',
      token: card.token,
      pspUrl: config.pspUrl,
      pspHeaders: { 'Content-Type': 'application/json', Authorization: `Bearer ${config.pspSecret}` },
      pspBody: JSON.stringify({
        amount: ORDER.amount,
        currency: ORDER.currency,
        card: { number: '[CARD_NUMBER]', exp_month: '[CARD_EXPIRY_MONTH]', exp_year: '[CARD_EXPIRY_YEAR]', cvc: '[CARD_CVV]' },
        metadata: { order_id: orderId },
      }),
    },
    { idempotencyKey: `charge-${orderId}` },
  );
  const answer = psp.json();
  const approved = psp.status === 200 && answer.status === 'succeeded';
  return {
    status: approved ? 'approved' : 'declined',
    orderId,
    card: { brand: card.brand, last4: card.last4 },
    psp: { status: psp.status, chargeId: answer.id ?? null, declineCode: answer.error?.decline_code ?? answer.error?.code ?? null },
  };
}

function page(publishableKey) {
  const attr = (v) => String(v).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Example checkout</title><link rel="stylesheet" href="/checkout.css"></head>
<body data-publishable-key="${attr(publishableKey)}"><main>
<h1>Checkout</h1>
<p>${attr(ORDER.description)}: <strong>${(ORDER.amount / 100).toFixed(2)} ${ORDER.currency.toUpperCase()}</strong></p>
<form id="checkout">
  <label for="email">Email</label>
  <input id="email" type="email" autocomplete="email">
  <div id="card"></div>
  <button id="pay" type="submit" disabled>Pay</button>
</form>
<!-- TODO(issue 12, item 5): a "Pay on a Tessera page" button once POST /v1/form-sessions (the hosted payment page) is merged; see README.md. -->
<p id="outcome" role="status" aria-live="polite"></p>
</main>
<script src="${attr(config.fieldsOrigin)}/js/v1/tessera.js" integrity="${attr(config.integrity)}" crossorigin="anonymous"></script>
<script src="/checkout.js"></script>
</body></html>`;
}

/**
 * The page's own policy: scripts only from this server and the fields origin, the fields as the
 * only frame, and requests only back to this server. A script injected into the page could still
 * run here, but it cannot read the iframe, and this policy keeps it from loading more code.
 */
const csp = [
  "default-src 'self'",
  `script-src 'self' ${config.fieldsOrigin}`,
  `frame-src ${config.fieldsOrigin}`,
  "connect-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

function send(res, status, type, body, headers = {}) {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...headers });
  res.end(body);
}
const json = (res, status, body) => send(res, status, 'application/json', JSON.stringify(body));

function start(publishableKey) {
  const server = http.createServer((req, res) => {
    const url = req.url?.split('?')[0];
    if (req.method === 'GET' && url === '/')
      return send(res, 200, 'text/html; charset=utf-8', page(publishableKey), { 'content-security-policy': csp });
    if (req.method === 'GET' && (url === '/checkout.js' || url === '/checkout.css')) {
      const type = url.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8';
      return send(res, 200, type, fs.readFileSync(path.join(here, 'public', url.slice(1))));
    }
    if (url === '/favicon.ico') return send(res, 204, 'text/plain', '');
    if (req.method !== 'POST' || url !== '/pay') return json(res, 404, { error: 'not found' });
    // Only this page may ask this server to charge (a cross-site form or script gets 403).
    if (req.headers.origin !== config.origin) return json(res, 403, { error: 'cross-origin request refused' });
    let raw = '';
    req.on('data', (chunk) => {
      raw += chunk;
      if (raw.length > 10_000) req.destroy();
    });
    req.on('end', async () => {
      let token;
      try {
        token = JSON.parse(raw).token;
      } catch {
        // answered below
      }
      if (typeof token !== 'string' || token.length === 0) return json(res, 400, { error: 'send {"token": "tok…"}' });
      try {
        const result = await pay(token);
        console.log(`${result.orderId}: ${result.status} (${result.card.brand} …${result.card.last4}, PSP ${result.psp.status})`);
        json(res, result.status === 'approved' ? 200 : 402, result);
      } catch (err) {
        if (err instanceof TesseraApiError) {
          // Tessera's errors carry a stable code; never log or echo card data (there is none here anyway).
          return json(res, err.status < 500 ? 400 : 502, { error: err.code, requestId: err.requestId });
        }
        console.error('payment failed:', err instanceof Error ? err.message : err);
        json(res, 502, { error: 'payment service unavailable' });
      }
    });
  });
  server.listen(config.port, '127.0.0.1', () => {
    console.log(`example checkout listening on ${config.origin} (Tessera at ${config.tesseraUrl}, card fields at ${config.fieldsOrigin})`);
  });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));
}

const publishableKey = config.publishableKey ?? (await createPublishableKey());
if (!config.publishableKey)
  console.log(`created publishable key ${publishableKey.slice(0, 13)}… for ${config.origin} (merchant ${config.merchantId})`);
start(publishableKey);

// An example checkout with both ways to pay with Tessera, and no card number or CVC ever on this
// server or its page (PCI DSS SAQ A). See README.md.
// - Card fields: the shopper types the card into Tessera's iframe (tessera.js, a publishable key),
//   the page gets a token, and this server keeps the token with its secret key and charges it
//   through Tessera's proxy at the sandbox PSP.
// - "Pay on a Tessera page": this server opens a form session with the amount and a completion URL
//   and sends the shopper to Tessera's hosted page; Tessera calls this server's completion endpoint
//   with each card's token before the shopper comes back, and this server charges it the same way.
//   A decline is shown on Tessera's page and the shopper tries another card in the same session.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Tessera, TesseraApiError, verifyCompletionSignature, verifyFormSessionReturn } from '@tessera/sdk';

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
  // The origin shoppers open this page at: the publishable key must allow exactly it, and the
  // return, cancel and completion URLs of the hosted page are registered under it.
  origin: process.env.EXAMPLE_ORIGIN ?? `http://127.0.0.1:${port}`,
  // The API's base URL, `/v1` included: the one meaning TESSERA_URL has in the README and every example.
  tesseraUrl: (process.env.TESSERA_URL ?? 'http://127.0.0.1:8080/v1').replace(/\/+$/, ''),
  // The admin service (dashboard and /admin/v1), a port of its own.
  adminUrl: (process.env.TESSERA_ADMIN_URL ?? 'http://127.0.0.1:8081').replace(/\/+$/, ''),
  fieldsOrigin: (process.env.FIELDS_ORIGIN ?? 'http://127.0.0.1:8082').replace(/\/+$/, ''),
  // `npm start` writes its test secret key to .tessera/dev-api-key (merchant `dev`).
  secretKey: process.env.TESSERA_API_KEY ?? readState('dev-api-key'),
  publishableKey: process.env.TESSERA_PUBLISHABLE_KEY,
  // The form signing secret of test mode; without it the example reads it through the admin API.
  formSecret: process.env.TESSERA_FORM_SECRET,
  // What of those two is not given, the example makes through the admin API, as this operator.
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
// The hosted page's way back: registered for the merchant, under this server's origin.
const urls = {
  done: `${config.origin}/done`,
  cancel: `${config.origin}/cancel`,
  complete: `${config.origin}/complete`,
};

/** Logs in to the admin API as the operator (what the dashboard does) and returns the headers of its later calls. */
async function adminHeaders() {
  if (!config.adminPassword)
    throw new Error('set TESSERA_ADMIN_PASSWORD, or TESSERA_PUBLISHABLE_KEY and TESSERA_FORM_SECRET (and register the URLs with the CLI)');
  const login = await fetch(`${config.adminUrl}/admin/v1/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: config.adminEmail, password: config.adminPassword }),
  });
  if (login.status !== 200) throw new Error(`admin login as ${config.adminEmail} failed (${login.status})`);
  const { csrfToken } = await login.json();
  return {
    'content-type': 'application/json',
    cookie: (login.headers.get('set-cookie') ?? '').split(';')[0],
    'x-csrf-token': csrfToken,
  };
}

/** A test publishable key allowing this page's origin, made through the admin API (what the dashboard does). */
async function createPublishableKey(headers) {
  const created = await fetch(`${config.adminUrl}/admin/v1/keys`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ kind: 'publishable', mode: 'test', merchantId: config.merchantId, allowedOrigins: [config.origin] }),
  });
  if (created.status !== 201) throw new Error(`creating a publishable key failed (${created.status}): ${await created.text()}`);
  return (await created.json()).apiKey;
}

/**
 * Registers this shop's URLs for the merchant (keeping any it has) and reads the form signing
 * secret, through the admin API as an operator would in the dashboard.
 */
async function setUpHostedPage(headers) {
  const merchant = `${config.adminUrl}/admin/v1/merchants/${encodeURIComponent(config.merchantId)}`;
  const current = await fetch(`${merchant}/return-urls`, { headers });
  const registered = current.status === 200 ? (await current.json()).returnUrls : [];
  const wanted = [...new Set([...registered, ...Object.values(urls)])];
  const saved = await fetch(`${merchant}/return-urls`, { method: 'PUT', headers, body: JSON.stringify({ returnUrls: wanted }) });
  if (saved.status !== 200) throw new Error(`registering the return URLs failed (${saved.status}): ${await saved.text()}`);
  const secret = await fetch(`${merchant}/form-signing-secret`, { method: 'POST', headers, body: JSON.stringify({ mode: 'test' }) });
  if (secret.status !== 200) throw new Error(`reading the form signing secret failed (${secret.status})`);
  return (await secret.json()).signingSecret;
}

// The amount is the server's: a price the browser sent could be anything. The form session carries
// it, signed in with the secret key.
const ORDER = { amount: 1999, currency: 'eur', description: 'One Tessera mug', merchantName: 'Tessera mugs' };
const price = new Intl.NumberFormat('en', { style: 'currency', currency: ORDER.currency.toUpperCase() }).format(ORDER.amount / 100);
const CARD_PLACEHOLDERS = { number: '[CARD_NUMBER]', exp_month: '[CARD_EXPIRY_MONTH]', exp_year: '[CARD_EXPIRY_YEAR]', cvc: '[CARD_CVV]' };

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
      pspBody: JSON.stringify({ amount: ORDER.amount, currency: ORDER.currency, card: CARD_PLACEHOLDERS, metadata: { order_id: orderId } }),
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

/** POST /hosted: a form session for this order (amount, currency, completion URL), then off to Tessera's page. */
async function payOnHostedPage(res) {
  const order = `order_${crypto.randomUUID()}`;
  const session = await tessera.formSessions.create(
    {
      returnUrl: `${urls.done}?order=${order}`,
      cancelUrl: urls.cancel,
      completionUrl: urls.complete,
      amount: ORDER.amount,
      currency: ORDER.currency,
      merchantName: ORDER.merchantName,
      // The shop's language, so that the hosted page speaks it too.
      locale: 'en',
    },
    { idempotencyKey: order },
  );
  res.writeHead(303, { location: session.url }).end();
}

/**
 * POST /complete: Tessera's completion call (docs/api.md, "The completion call"). Verify the
 * signature on the raw body, keep the token, charge it once per attempt (the idempotency key),
 * and say what the PSP said. Tessera shows a decline to the shopper, who may try another card.
 */
async function complete(req, res, formSecret) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  let call;
  try {
    call = verifyCompletionSignature(Buffer.concat(chunks), req.headers['tessera-signature'], formSecret);
  } catch (err) {
    console.error(`refused a completion call: ${err.message}`);
    return res.writeHead(400).end();
  }
  const card = await tessera.tokens.retain(call.token);
  const psp = await tessera.proxy.forward(
    {
      method: 'post',
      token: card.token,
      pspUrl: config.pspUrl,
      pspHeaders: { 'Content-Type': 'application/json', Authorization: `Bearer ${config.pspSecret}` },
      pspBody: JSON.stringify({
        amount: call.amount,
        currency: call.currency,
        card: CARD_PLACEHOLDERS,
        metadata: { form_session: call.formSession, attempt: call.attempt },
      }),
    },
    { idempotencyKey: `${call.formSession}:${call.attempt}` },
  );
  const charge = psp.json();
  const succeeded = psp.status === 200 && charge.status === 'succeeded';
  console.log(`attempt ${call.attempt} of ${call.formSession}: ${succeeded ? 'charged' : 'declined'} (${card.brand} …${card.last4})`);
  json(
    res,
    200,
    succeeded ? { outcome: 'succeeded' } : { outcome: 'declined', message: charge.error?.message ?? 'Your card was declined.' },
  );
}

const escape = (v) => String(v).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
/** This shop's pages: its own stylesheet, and its scripts (if any) after the content. */
const shell = (title, body, scripts = '') => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)}</title><link rel="stylesheet" href="/checkout.css"></head>
${body}
${scripts}</html>`;

/** GET /: the card fields form, and a form that sends the shopper to Tessera's page instead. */
function checkoutPage(publishableKey) {
  return shell(
    'Example checkout',
    `<body data-publishable-key="${escape(publishableKey)}"><main>
<h1>Checkout</h1>
<p>${escape(ORDER.description)}: <strong>${escape(price)}</strong></p>
<form id="checkout">
  <label for="email">Email</label>
  <input id="email" type="email" autocomplete="email">
  <div id="card"></div>
  <button id="pay" type="submit" disabled>Pay</button>
</form>
<form id="hosted" method="post" action="/hosted">
  <p>Or enter your card on Tessera's secure payment page:</p>
  <button id="pay-hosted" type="submit">Pay on a Tessera page</button>
</form>
<p id="outcome" role="status" aria-live="polite"></p>
</main>`,
    `<script src="${escape(config.fieldsOrigin)}/js/v1/tessera.js" integrity="${escape(config.integrity)}" crossorigin="anonymous"></script>
<script src="/checkout.js"></script>
</body>`,
  );
}

/** GET /done: the signed return; what to tell the shopper comes from the session, read with the secret key. */
async function done(req, res, formSecret) {
  let landed;
  try {
    landed = verifyFormSessionReturn(req.url, { signingSecret: formSecret, origin: config.origin });
  } catch {
    return send(res, 400, HTML, shell('Not verified', '<body><main><h1>This link is not valid</h1></main></body>'));
  }
  const session = await tessera.formSessions.retrieve(landed.sessionId);
  const status = session.payment?.status ?? 'none';
  const heading =
    status === 'succeeded'
      ? 'Thank you: payment received'
      : status === 'unknown'
        ? 'We are confirming your payment'
        : `Payment ${escape(status)}`;
  send(
    res,
    200,
    HTML,
    shell(
      'Order',
      `<body><main><h1>${heading}</h1><p id="outcome">${escape(status)}</p>
<p>Order ${escape(landed.query.get('order') ?? '')}: ${escape(price)}, ${escape(session.card?.brand ?? '')} ending ${escape(session.card?.last4 ?? '')}, after ${escape(session.payment?.attempts ?? 0)} attempt(s).</p>
<p><a href="/">Back to the shop</a></p></main></body>`,
    ),
  );
}

/**
 * The pages' own policy: scripts only from this server and the fields origin, the fields as the
 * only frame, and requests only back to this server and to the fields origin (tessera.js reports
 * the page's scripts there: docs/browser.md, SAQ A kit). A script injected into the page could still
 * run here, but it cannot read the iframe, and this policy keeps it from loading more code. Forms
 * post to this server only, whose answer to "Pay on a Tessera page" redirects to the fields origin
 * (Chromium checks form-action on that redirect too).
 */
const csp = [
  "default-src 'self'",
  `script-src 'self' ${config.fieldsOrigin}`,
  `frame-src ${config.fieldsOrigin}`,
  `connect-src 'self' ${config.fieldsOrigin}`,
  "style-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  `form-action 'self' ${config.fieldsOrigin}`,
  "frame-ancestors 'none'",
].join('; ');

const HTML = 'text/html; charset=utf-8';
function send(res, status, type, body, headers = {}) {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', 'content-security-policy': csp, ...headers });
  res.end(body);
}
const json = (res, status, body) => send(res, status, 'application/json', JSON.stringify(body));

/** POST /pay's body: a JSON {token}, answered with the payment's outcome or a clear error. */
function payRoute(req, res) {
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
}

function start(publishableKey, formSecret) {
  const server = http.createServer((req, res) => {
    const url = req.url?.split('?')[0];
    const route = `${req.method} ${url}`;
    const handle = async () => {
      if (route === 'GET /') return send(res, 200, HTML, checkoutPage(publishableKey));
      if (route === 'GET /checkout.js' || route === 'GET /checkout.css') {
        const type = url.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8';
        return send(res, 200, type, fs.readFileSync(path.join(here, 'public', url.slice(1))));
      }
      if (url === '/favicon.ico') return send(res, 204, 'text/plain', '');
      // Tessera calls this one, server to server, signed: no Origin to check.
      if (route === 'POST /complete') return complete(req, res, formSecret);
      if (route === 'GET /done') return done(req, res, formSecret);
      if (route === 'GET /cancel')
        return send(
          res,
          200,
          HTML,
          shell('Canceled', '<body><main><h1>Payment canceled</h1><p><a href="/">Back to the shop</a></p></main></body>'),
        );
      if (route !== 'POST /pay' && route !== 'POST /hosted') return json(res, 404, { error: 'not found' });
      // Only this page may ask this server to charge or open a session (a cross-site form or script gets 403).
      if (req.headers.origin !== config.origin) return json(res, 403, { error: 'cross-origin request refused' });
      if (route === 'POST /hosted') return payOnHostedPage(res);
      return payRoute(req, res);
    };
    handle().catch((err) => {
      console.error(`${route} failed: ${err instanceof Error ? err.message : err}`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  server.listen(config.port, '127.0.0.1', () => {
    console.log(`example checkout listening on ${config.origin} (Tessera at ${config.tesseraUrl}, card fields at ${config.fieldsOrigin})`);
  });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));
}

// The admin API makes what is not given: with both settings (and the URLs registered with the CLI, README) no login.
const headers = !config.publishableKey || !config.formSecret ? await adminHeaders() : undefined;
const publishableKey = config.publishableKey ?? (await createPublishableKey(headers));
if (!config.publishableKey)
  console.log(`created publishable key ${publishableKey.slice(0, 13)}… for ${config.origin} (merchant ${config.merchantId})`);
const formSecret = config.formSecret ?? (await setUpHostedPage(headers));
start(publishableKey, formSecret);

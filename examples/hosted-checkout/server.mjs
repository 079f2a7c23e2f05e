// An example shop that takes payment on Tessera's hosted payment page: no card form of its own at
// all. "Buy" opens a form session with the amount and a completion URL, and sends the shopper to
// Tessera's page; Tessera calls this server's completion endpoint with each card's token before the
// shopper comes back, and this server charges it through Tessera's proxy at the sandbox PSP. A
// decline is shown on Tessera's page and the shopper tries another card. No card number or CVC
// ever reaches this server (PCI DSS SAQ A). See README.md.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Tessera, verifyCompletionSignature, verifyFormSessionReturn } from '@tessera/sdk';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
// Where `npm start` keeps its development secrets (TESSERA_STATE_DIR, as scripts/start.mjs reads it).
// eslint-disable-next-line no-restricted-properties -- an example reads its settings from the environment
const stateFile = (name) => path.join(path.resolve(root, process.env.TESSERA_STATE_DIR ?? '.tessera'), name);
const readState = (name) => (fs.existsSync(stateFile(name)) ? fs.readFileSync(stateFile(name), 'utf8').trim() : undefined);

/* eslint-disable no-restricted-properties -- an example reads its settings from the environment */
const port = Number(process.env.PORT ?? 3002);
const config = {
  port,
  // This shop's origin: its return, cancel and completion URLs are registered under it.
  origin: process.env.EXAMPLE_ORIGIN ?? `http://127.0.0.1:${port}`,
  // The API's base URL, as `npm start` prints it (…/v1).
  tesseraUrl: (process.env.TESSERA_URL ?? 'http://127.0.0.1:8080/v1').replace(/\/+$/, ''),
  adminUrl: (process.env.TESSERA_ADMIN_URL ?? 'http://127.0.0.1:8081').replace(/\/+$/, ''),
  secretKey: process.env.TESSERA_SECRET_KEY ?? readState('dev-api-key'),
  // The form signing secret of test mode; without it the example reads it through the admin API.
  formSecret: process.env.TESSERA_FORM_SECRET,
  adminEmail: process.env.TESSERA_ADMIN_EMAIL ?? 'admin@tessera.local',
  adminPassword: process.env.TESSERA_ADMIN_PASSWORD ?? readState('dev-admin-password'),
  merchantId: process.env.TESSERA_MERCHANT ?? 'dev',
  pspUrl: process.env.PSP_URL ?? 'http://127.0.0.1:8090/v1/charges',
  pspSecret: process.env.PSP_SECRET ?? 'sk_sandbox',
};
/* eslint-enable no-restricted-properties */

if (!config.secretKey) {
  console.error('No secret key: run `npm start` first (it writes .tessera/dev-api-key) or set TESSERA_SECRET_KEY.');
  process.exit(2);
}

const tessera = new Tessera(config.secretKey, { baseUrl: config.tesseraUrl, timeoutMs: 45_000 });
const urls = {
  done: `${config.origin}/done`,
  cancel: `${config.origin}/cancel`,
  complete: `${config.origin}/complete`,
};
// The amount is the server's: the session carries it, signed in with the secret key.
const ORDER = { amount: 1999, currency: 'eur', name: 'One Tessera mug' };

/**
 * Registers this shop's URLs for the merchant (keeping any it has) and reads the form signing
 * secret, through the admin API as an operator would in the dashboard.
 */
async function setUpMerchant() {
  if (!config.adminPassword) throw new Error('set TESSERA_ADMIN_PASSWORD (or TESSERA_FORM_SECRET and register the URLs yourself)');
  const admin = `${config.adminUrl}/admin/v1`;
  const login = await fetch(`${admin}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: config.adminEmail, password: config.adminPassword }),
  });
  if (login.status !== 200) throw new Error(`admin login as ${config.adminEmail} failed (${login.status})`);
  const { csrfToken } = await login.json();
  const headers = {
    'content-type': 'application/json',
    cookie: (login.headers.get('set-cookie') ?? '').split(';')[0],
    'x-csrf-token': csrfToken,
  };
  const merchant = `${admin}/merchants/${encodeURIComponent(config.merchantId)}`;
  const current = await fetch(`${merchant}/return-urls`, { headers });
  const registered = current.status === 200 ? (await current.json()).returnUrls : [];
  const wanted = [...new Set([...registered, ...Object.values(urls)])];
  const saved = await fetch(`${merchant}/return-urls`, { method: 'PUT', headers, body: JSON.stringify({ returnUrls: wanted }) });
  if (saved.status !== 200) throw new Error(`registering the return URLs failed (${saved.status}): ${await saved.text()}`);
  if (config.formSecret) return config.formSecret;
  const secret = await fetch(`${merchant}/form-signing-secret`, { method: 'POST', headers, body: JSON.stringify({ mode: 'test' }) });
  if (secret.status !== 200) throw new Error(`reading the form signing secret failed (${secret.status})`);
  return (await secret.json()).signingSecret;
}

const formSecret = await setUpMerchant();

const escape = (v) => String(v).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const page = (title, body) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escape(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a}button{font:inherit;padding:.6rem 1.2rem}</style></head>
<body><main>${body}</main></body></html>`;

const price = new Intl.NumberFormat('en', { style: 'currency', currency: ORDER.currency.toUpperCase() }).format(ORDER.amount / 100);

/** GET /: the shop. Buying is a form post to this server, which opens the session. */
function shopPage() {
  return page(
    'Tessera mugs',
    `<h1>Tessera mugs</h1><p>${escape(ORDER.name)}: ${escape(price)}</p>
<form method="post" action="/buy"><button type="submit" id="buy">Buy for ${escape(price)}</button></form>
<p>Test cards: 4242 4242 4242 4242 pays, 4000 0000 0000 0002 is declined.</p>`,
  );
}

/** POST /buy: a form session for this order (amount, currency, completion URL), then off to Tessera's page. */
async function buy(res) {
  const order = `order_${crypto.randomUUID()}`;
  const session = await tessera.formSessions.create(
    {
      returnUrl: `${urls.done}?order=${order}`,
      cancelUrl: urls.cancel,
      completionUrl: urls.complete,
      amount: ORDER.amount,
      currency: ORDER.currency,
      merchantName: 'Tessera mugs',
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
async function complete(req, res) {
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
        card: { number: '[CARD_NUMBER]', exp_month: '[CARD_EXPIRY_MONTH]', exp_year: '[CARD_EXPIRY_YEAR]', cvc: '[CARD_CVV]' },
        metadata: { form_session: call.formSession, attempt: call.attempt },
      }),
    },
    { idempotencyKey: `${call.formSession}:${call.attempt}` },
  );
  const charge = psp.json();
  const succeeded = psp.status === 200 && charge.status === 'succeeded';
  console.log(`attempt ${call.attempt} of ${call.formSession}: ${succeeded ? 'charged' : 'declined'} (${card.brand} ${card.last4})`);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify(
      succeeded ? { outcome: 'succeeded' } : { outcome: 'declined', message: charge.error?.message ?? 'Your card was declined.' },
    ),
  );
}

/** GET /done: the signed return; what to tell the shopper comes from the session, read with the secret key. */
async function done(req, res) {
  let landed;
  try {
    landed = verifyFormSessionReturn(req.url, { signingSecret: formSecret, origin: config.origin });
  } catch {
    return res.writeHead(400, { 'content-type': 'text/html; charset=utf-8' }).end(page('Not verified', '<h1>This link is not valid</h1>'));
  }
  const session = await tessera.formSessions.retrieve(landed.sessionId);
  const status = session.payment?.status ?? 'none';
  const heading =
    status === 'succeeded'
      ? 'Thank you: payment received'
      : status === 'unknown'
        ? 'We are confirming your payment'
        : `Payment ${escape(status)}`;
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.end(
    page(
      'Order',
      `<h1>${heading}</h1><p id="outcome">${escape(status)}</p>
<p>Order ${escape(landed.query.get('order') ?? '')}: ${escape(price)}, ${escape(session.card?.brand ?? '')} ending ${escape(session.card?.last4 ?? '')}, after ${escape(session.payment?.attempts ?? 0)} attempt(s).</p>
<p><a href="/">Back to the shop</a></p>`,
    ),
  );
}

const server = http.createServer((req, res) => {
  const route = `${req.method} ${(req.url ?? '/').split('?')[0]}`;
  const handle = async () => {
    if (route === 'GET /') return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(shopPage());
    if (route === 'POST /buy') return buy(res);
    if (route === 'POST /complete') return complete(req, res);
    if (route === 'GET /done') return done(req, res);
    if (route === 'GET /cancel')
      return res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(page('Canceled', '<h1>Payment canceled</h1><p><a href="/">Back to the shop</a></p>'));
    res.writeHead(404).end();
  };
  handle().catch((err) => {
    console.error(`${route} failed: ${err.message}`);
    if (!res.headersSent) res.writeHead(500);
    res.end();
  });
});

server.listen(config.port, '127.0.0.1', () => {
  console.log(`example hosted checkout listening on ${config.origin}`);
});

// A minimal merchant backend on top of @tessera/sdk: it takes card details from your checkout
// page once, swaps them for a Tessera token, and charges the token through the sandbox PSP.
// Your server never stores card data; with Tessera's form/JS integration it would not even
// see it (this example takes it directly, which requires PCI DSS compliance in production).
import fs from 'node:fs';
import http from 'node:http';
import { Tessera, TesseraApiError } from '@tessera/sdk';

/* eslint-disable no-restricted-properties -- an example reads its settings from the environment */
const config = {
  port: Number(process.env.PORT ?? 3000),
  tesseraUrl: process.env.TESSERA_URL ?? 'http://127.0.0.1:8080/v1',
  // `npm start` writes its test key here; use your own key from the dashboard otherwise.
  apiKey: process.env.TESSERA_API_KEY ?? fs.readFileSync('.tessera/dev-api-key', 'utf8').trim(),
  pspUrl: process.env.PSP_URL ?? 'http://127.0.0.1:8090/v1/charges',
  pspSecret: process.env.PSP_SECRET ?? 'sk_sandbox',
};
/* eslint-enable no-restricted-properties */

// The SDK takes the API key once, at initialisation.
const tessera = new Tessera(config.apiKey, { baseUrl: config.tesseraUrl, timeoutMs: 45_000 });

/** POST /checkout {card:{number,expiryMonth,expiryYear,cvv,holderName?}, amount, currency, orderId} */
async function checkout(input) {
  const card = await tessera.tokens.create(input.card, { idempotencyKey: `tokenize-${input.orderId}` });

  // The PSP's own API shape, with placeholders where Tessera puts the card data.
  const pspBody = JSON.stringify({
    amount: input.amount,
    currency: input.currency,
    card: { number: '[CARD_NUMBER]', exp_month: '[CARD_EXPIRY_MONTH]', exp_year: '[CARD_EXPIRY_YEAR]', cvc: '[CARD_CVV]' },
    metadata: { order_id: input.orderId },
  });
  const psp = await tessera.proxy.forward(
    {
      method: 'post',
      token: card.token,
      pspUrl: config.pspUrl,
      pspHeaders: { 'Content-Type': 'application/json', Authorization: `Bearer ${config.pspSecret}` },
      pspBody,
    },
    { idempotencyKey: `charge-${input.orderId}` },
  );

  // A decline is the PSP's answer (here 402), not an exception.
  const answer = psp.json();
  const approved = psp.status === 200 && answer.status === 'succeeded';
  return {
    status: approved ? 'approved' : 'declined',
    orderId: input.orderId,
    card: { token: card.token, brand: card.brand, last4: card.last4 },
    psp: { status: psp.status, chargeId: answer.id ?? null, declineCode: answer.error?.decline_code ?? null },
    timings: { tesseraRequestId: psp.requestId, pspMs: psp.pspMs, totalMs: psp.totalMs },
  };
}

function reply(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const server = http.createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/checkout') return reply(res, 404, { error: 'POST /checkout' });
  let raw = '';
  req.on('data', (chunk) => (raw += chunk));
  req.on('end', async () => {
    let input;
    try {
      input = JSON.parse(raw);
    } catch {
      return reply(res, 400, { error: 'send JSON' });
    }
    try {
      const result = await checkout(input);
      reply(res, result.status === 'approved' ? 200 : 402, result);
    } catch (err) {
      if (err instanceof TesseraApiError) {
        // Tessera's own errors: typed, with a stable code and the field at fault. Never log card data.
        return reply(res, err.status < 500 ? 400 : 502, { error: err.code, param: err.param ?? null, requestId: err.requestId });
      }
      console.error('checkout failed:', err instanceof Error ? err.message : err);
      reply(res, 502, { error: 'payment service unavailable' });
    }
  });
});

server.listen(config.port, '127.0.0.1', () => {
  console.log(`merchant backend listening on http://127.0.0.1:${server.address().port} (Tessera at ${config.tesseraUrl})`);
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));

import path from 'node:path';
import { findCardDataInLogs, freePort, ManagedProcess, ROOT, startSandboxPsp, TEST_CARDS, useSharedStack } from './harness';

jest.setTimeout(60_000);

const env = useSharedStack();
const shopId = env.merchant('shop');

/**
 * examples/merchant-backend/server.mjs, run as a real process on @tessera/sdk, against the real
 * services and the sandbox PSP: an approved, a declined and an invalid checkout.
 */

let sandbox: ManagedProcess;
let merchant: ManagedProcess;
let merchantUrl: string;

beforeAll(async () => {
  const psp = await startSandboxPsp();
  sandbox = psp.sandbox;
  const key = env.stack.createKey(shopId, 'test');
  const merchantPort = await freePort();
  merchantUrl = `http://127.0.0.1:${merchantPort}`;
  merchant = new ManagedProcess('merchant', process.execPath, [path.join(ROOT, 'examples/merchant-backend/server.mjs')], {
    PATH: process.env.PATH,
    PORT: String(merchantPort),
    TESSERA_URL: `${env.stack.baseUrl}/v1`,
    TESSERA_API_KEY: key.apiKey,
    PSP_URL: psp.chargesUrl,
  }).start();
  await merchant.waitForOutput('merchant backend listening');
});

afterAll(async () => {
  await merchant?.stop();
  await sandbox?.stop();
});

async function checkout(orderId: string, card: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const res = await fetch(`${merchantUrl}/checkout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ orderId, amount: 1000, currency: 'eur', card }),
  });
  return { status: res.status, body: await res.json() };
}

const expiry = { expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2 };

describe('the example merchant backend', () => {
  it('approves a checkout with the success test card', async () => {
    const res = await checkout('order-1', { number: TEST_CARDS.visa, cvv: '046', ...expiry });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'approved',
      card: { brand: 'visa', last4: '4242', token: expect.stringMatching(/^tok\./) },
      psp: { status: 200, chargeId: expect.stringMatching(/^ch_/) },
      timings: { tesseraRequestId: expect.any(String), pspMs: expect.any(Number), totalMs: expect.any(Number) },
    });
  });

  it('reports the sandbox decline of the declined test card', async () => {
    const res = await checkout('order-2', { number: TEST_CARDS.visaDeclined, cvv: '046', ...expiry });
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({ status: 'declined', psp: { status: 402, chargeId: null } });
  });

  it('turns a Tessera validation error into the field at fault', async () => {
    const res = await checkout('order-3', { number: '4242424242424241', ...expiry });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'card_number_invalid', param: 'number' });
  });

  it('leaves no card number in any log, the example and the sandbox included', () => {
    const logs = [env.stack.logs(), sandbox.output, merchant.output].join('\n');
    expect(findCardDataInLogs(logs, [TEST_CARDS.visa, TEST_CARDS.visaDeclined], ['046'])).toEqual([]);
  });
});

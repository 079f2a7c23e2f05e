/**
 * Issue 12, item 2: a token made in a browser is provisional. It expires after
 * BROWSER_TOKEN_TTL_SECONDS unless the merchant's server retains it with a secret key
 * (POST /v1/token/{token}/retain); a retained token lives like any other.
 *
 * The browser tokenization route is not part of this test: the provisional tokens are made the
 * way that route makes them, by the vault's Tokenize with provisional set, over the same gRPC
 * contract (plaintext on loopback, as the stack runs without TLS).
 */
import {
  callUnary,
  createVaultClient,
  type TokenizeBatchItem,
  type TokenizeBatchResponse,
  type TokenizeRequest,
  type TokenRecord__Output,
  type VaultClient,
} from '@tessera/protos';
import { aCard, apiClient, type ApiKey, findCardDataInLogs, TEST_CARDS, TEST_CVV, useStack } from './harness';

jest.setTimeout(60_000);

const BROWSER_TOKEN_TTL_SECONDS = 2;
const env = useStack({ env: { BROWSER_TOKEN_TTL_SECONDS: String(BROWSER_TOKEN_TTL_SECONDS) } });

let acme: ApiKey;
let acmeLive: ApiKey;
let globex: ApiKey;
let asAcme: ReturnType<typeof apiClient>;
let vault: VaultClient;

beforeAll(() => {
  acme = env.stack.createKey('acme', 'test');
  acmeLive = env.stack.createKey('acme', 'live');
  globex = env.stack.createKey('globex', 'test');
  asAcme = apiClient(env.stack, acme.apiKey);
  vault = createVaultClient(env.stack.env.VAULT_ADDR as string);
});

afterAll(() => vault?.close());

/** A card as the browser tokenization route hands it to the vault. */
function browserCard(merchantId: string): TokenizeRequest {
  const card = aCard();
  return {
    merchantId,
    mode: 'test',
    number: TEST_CARDS.visa,
    holderName: card.holderName as string,
    expiryMonth: card.expiryMonth as number,
    expiryYear: card.expiryYear as number,
    cvv: TEST_CVV,
    provisional: true,
  };
}

async function tokenizeInBrowser(merchantId = acme.merchantId): Promise<TokenRecord__Output> {
  return callUnary<TokenizeRequest, TokenRecord__Output>(vault, vault.Tokenize, browserCard(merchantId), { timeoutMs: 5000 });
}

/** Polls until the token is gone for its own merchant (404), or fails after `timeoutMs`. */
async function waitUntilGone(token: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await asAcme('GET', `/v1/token/${token}`);
    if (res.status === 404) return;
    expect(res.status).toBe(200);
    if (Date.now() > deadline) throw new Error(`the token was still there after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('provisional (browser-made) tokens', () => {
  it('are shown as provisional with their short deadline, expire unless retained, and a retained one outlives the deadline', async () => {
    const [kept, dropped] = [await tokenizeInBrowser(), await tokenizeInBrowser()];
    expect(kept.provisional).toBe(true);

    const read = await asAcme('GET', `/v1/token/${dropped.token}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ token: dropped.token, provisional: true, last4: '4242', cvvAvailable: true });
    const lifetimeMs = Date.parse(read.body.expiresAt) - Date.parse(read.body.createdAt);
    expect(lifetimeMs).toBe(BROWSER_TOKEN_TTL_SECONDS * 1000);

    const retained = await asAcme('POST', `/v1/token/${kept.token}/retain`);
    expect(retained.status).toBe(200);
    expect(retained.body).toMatchObject({ token: kept.token, provisional: false, last4: '4242', cvvAvailable: true });
    expect(Date.parse(retained.body.expiresAt)).toBeGreaterThan(Date.now() + 365 * 24 * 3600 * 1000);
    // Idempotent: the same record again (an empty JSON object as the body is accepted too).
    const again = await asAcme('POST', `/v1/token/${kept.token}/retain`, {});
    expect(again.status).toBe(200);
    expect(again.body).toEqual(retained.body);

    await waitUntilGone(dropped.token);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(read.body.expiresAt));
    // Too late to retain an expired one; the retained one is still there and usable.
    const late = await asAcme('POST', `/v1/token/${dropped.token}/retain`);
    expect(late.status).toBe(404);
    expect(late.body.error.code).toBe('token_not_found');
    const after = await asAcme('GET', `/v1/token/${kept.token}`);
    expect(after.status).toBe(200);
    expect(after.body).toEqual(retained.body);
    const dryRun = await asAcme('POST', '/v1/proxy/dry-run', {
      method: 'post',
      token: kept.token,
      pspUrl: 'https://psp.example/charges',
      pspHeaders: { 'content-type': 'application/json' },
      pspBody: '{"number":"[CARD_NUMBER]","cvc":"[CARD_CVV]"}',
    });
    expect(dryRun.status).toBe(200);
    expect(dryRun.body.placeholders).toMatchObject({ filled: ['[CARD_NUMBER]', '[CARD_CVV]'], unfillable: [] });
  });

  it('can be used by the merchant’s secret key before they are retained', async () => {
    const { token } = await tokenizeInBrowser();
    const dryRun = await asAcme('POST', '/v1/proxy/dry-run', {
      method: 'post',
      token,
      pspUrl: 'https://psp.example/charges',
      pspHeaders: { 'content-type': 'application/json' },
      pspBody: '{"number":"[CARD_NUMBER]"}',
    });
    expect(dryRun.status).toBe(200);
    expect(dryRun.body.request.body).toBe('{"number":"424242******4242"}');
  });

  it('answer 404 token_not_found to a retain by another merchant or the other mode, and stay provisional', async () => {
    const { token } = await tokenizeInBrowser();
    for (const key of [globex, acmeLive]) {
      const res = await apiClient(env.stack, key.apiKey)('POST', `/v1/token/${token}/retain`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('token_not_found');
    }
    expect((await asAcme('GET', `/v1/token/${token}`)).body.provisional).toBe(true);
    const unknown = await asAcme('POST', '/v1/token/tok.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/retain');
    expect(unknown.status).toBe(404);
  });

  it('come out of TokenizeBatch item by item, and POST /v1/token with a secret key never makes one', async () => {
    const items: TokenizeBatchItem[] = [
      { requestId: 'b1', request: browserCard(acme.merchantId) },
      { requestId: 'b2', request: { ...browserCard(acme.merchantId), provisional: false } },
    ];
    const { results } = await callUnary<{ items: TokenizeBatchItem[] }, TokenizeBatchResponse>(
      vault,
      vault.TokenizeBatch,
      { items },
      { timeoutMs: 5000 },
    );
    expect(results.map((r) => r.record?.provisional)).toEqual([true, false]);

    const created = await asAcme('POST', '/v1/token', aCard());
    expect(created.status).toBe(201);
    expect(created.body.provisional).toBe(false);
    const provisional = await tokenizeInBrowser();
    await waitUntilGone(provisional.token);
    const ordinary = await asAcme('GET', `/v1/token/${created.body.token}`);
    expect(ordinary.status).toBe(200);
    expect(ordinary.body.provisional).toBe(false);
  });

  it('leave no card data in any service log', () => {
    expect(findCardDataInLogs(env.stack.logs(), [TEST_CARDS.visa], [TEST_CVV])).toEqual([]);
  });
});

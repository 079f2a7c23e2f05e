/**
 * Issue 25, item 2: the fields service calls the vault with its own certificate (SAN DNS:fields),
 * and the vault refuses that identity everything but what a shopper's browser may cause: a
 * provisional token, answered without fingerprint or BIN, and a CVC attached under a CVC session
 * the merchant's server opened (the vault claims it itself). A real vault over mTLS, on a Redis
 * with the shipped ACL users, so the vault's own user claims the grant.
 */
import * as grpc from '@grpc/grpc-js';
import {
  attachCvvRequestToWire,
  callUnary,
  checkHealth,
  clientCredentials,
  createHealthClient,
  createVaultClient,
  devTlsFiles,
  errorRaisedByPeer,
  readTlsMaterial,
  renderRequestToWire,
  tlsChannelOptions,
  tokenizeRequestToWire,
  tokenRefToWire,
  updateTokenRequestToWire,
  type HealthClient,
  type TokenizeRequest,
  type TokenRecord__Output,
  type VaultClient,
  type WireTokenizeRequest,
} from '@tessera/protos';
import { Redis } from 'ioredis';
import { cvcSessionDigest, newCvcSessionSecret, RedisCvcSessionStore } from '@tessera/merchant-data';
import { aCard, apiClient, TEST_CARDS, useStack } from './harness';

jest.setTimeout(90_000);

const env = useStack({ tls: true, redis: { acl: true } });
const MERCHANT = 'fields-shop';
const CALL = { timeoutMs: 5000 };

const vaultClients: VaultClient[] = [];
const healthClients: HealthClient[] = [];
afterAll(() => {
  for (const c of [...vaultClients, ...healthClients]) c.close();
});

/** A vault client as the named service builds it: its own certificate, the vault's name expected. */
function vaultAs(service: 'fields' | 'gateway'): VaultClient {
  const tls = readTlsMaterial(devTlsFiles(env.stack.certDir as string, service));
  const client = createVaultClient(env.stack.env.VAULT_ADDR as string, clientCredentials(tls), tlsChannelOptions(tls, 'vault'));
  vaultClients.push(client);
  return client;
}

function healthAs(service: 'fields'): HealthClient {
  const tls = readTlsMaterial(devTlsFiles(env.stack.certDir as string, service));
  const client = createHealthClient(env.stack.env.VAULT_ADDR as string, clientCredentials(tls), tlsChannelOptions(tls, 'vault'));
  healthClients.push(client);
  return client;
}

/** The gRPC status of a call's failure, with the code of the vault's typed refusal when it sent one. */
async function outcomeOf(promise: Promise<unknown>): Promise<{ status: grpc.status | 'ok'; code?: string }> {
  try {
    await promise;
    return { status: 'ok' };
  } catch (err) {
    const code = errorRaisedByPeer(err)?.code;
    return { status: (err as grpc.ServiceError).code, ...(code === undefined ? {} : { code }) };
  }
}

const DENIED = { status: grpc.status.PERMISSION_DENIED };

const card = (overrides: Partial<TokenizeRequest> = {}): TokenizeRequest => ({
  merchantId: MERCHANT,
  number: TEST_CARDS.visa,
  holderName: 'Ada Lovelace',
  expiryMonth: 12,
  expiryYear: new Date().getUTCFullYear() + 2,
  cvv: '',
  mode: 'test',
  ...overrides,
});

const ref = (token: string) => tokenRefToWire({ merchantId: MERCHANT, mode: 'test', token });
const renderOf = (token: string) =>
  renderRequestToWire({ merchantId: MERCHANT, mode: 'test', token, template: '[CARD_NUMBER]', contentType: 'text/plain' });

/** Every vault RPC, as the fields service could call it with its own client. */
function rpcs(c: VaultClient) {
  return {
    tokenize: (request: TokenizeRequest) =>
      callUnary<WireTokenizeRequest, TokenRecord__Output>(c, c.tokenize, tokenizeRequestToWire(request), CALL),
    tokenizeBatch: () =>
      callUnary(c, c.tokenizeBatch, { items: [{ requestId: 'r1', request: tokenizeRequestToWire(card({ provisional: true })) }] }, CALL),
    getToken: (token: string) => callUnary(c, c.getToken, ref(token), CALL),
    deleteToken: (token: string) => callUnary(c, c.deleteToken, ref(token), CALL),
    retainToken: (token: string) => callUnary(c, c.retainToken, ref(token), CALL),
    render: (token: string) => callUnary(c, c.render, renderOf(token), CALL),
    renderBatch: (token: string) => callUnary(c, c.renderBatch, { items: [{ requestId: 'r1', request: renderOf(token) }] }, CALL),
    preview: (token: string) => callUnary(c, c.preview, renderOf(token), CALL),
    updateToken: (token: string) =>
      callUnary(
        c,
        c.updateToken,
        updateTokenRequestToWire({ merchantId: MERCHANT, mode: 'test', token, expiryMonth: 1, expiryYear: 2040, holderName: '' }),
        CALL,
      ),
    attachCvv: (token: string, cvcSession?: string) =>
      callUnary<ReturnType<typeof attachCvvRequestToWire>, TokenRecord__Output>(
        c,
        c.attachCvv,
        attachCvvRequestToWire({
          merchantId: MERCHANT,
          mode: 'test',
          token,
          cvv: '123',
          cvvIsInteger: false,
          ...(cvcSession === undefined ? {} : { cvcSession }),
        }),
        CALL,
      ),
  };
}

let asMerchant: ReturnType<typeof apiClient>;
let fields: ReturnType<typeof rpcs>;

beforeAll(() => {
  asMerchant = apiClient(env.stack, env.stack.createKey(MERCHANT, 'test').apiKey);
  fields = rpcs(vaultAs('fields'));
});

/** A token of the merchant's, made by its server (secret key, through the gateway), without a CVV. */
async function storedCard(): Promise<{ token: string; fingerprint: string }> {
  const res = await asMerchant('POST', '/v1/token', aCard({ cvv: undefined }));
  expect(res.status).toBe(201);
  return res.body as { token: string; fingerprint: string };
}

/**
 * A CVC session for `token`, as the gateway's POST /v1/token/{token}/cvc-sessions writes it (that
 * route is served with the browser routes, which this stack does not run), as the gateway's Redis user.
 */
async function openGrant(token: string): Promise<string> {
  const secret = newCvcSessionSecret();
  const now = Date.now();
  const gatewayRedis = new Redis(env.redis.users!.gateway);
  await new RedisCvcSessionStore(gatewayRedis).create({
    digest: cvcSessionDigest(secret),
    merchantId: MERCHANT,
    mode: 'test',
    token,
    keyId: 'key_fields_test',
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + 600_000).toISOString(),
  });
  await gatewayRedis.quit();
  return secret;
}

describe('the fields identity at the vault (real vault over mTLS)', () => {
  it('creates a provisional token, answered with brand and last four but no fingerprint or BIN', async () => {
    const record = await fields.tokenize(card({ provisional: true }));
    expect(record).toMatchObject({ provisional: true, brand: 'visa', last4: '4242', fingerprint: '', bin: '' });
    // The same card through the gateway (a secret key) still gets its fingerprint.
    const { fingerprint } = await storedCard();
    expect(fingerprint).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('is refused a token that is not provisional, and the merchant’s existing token for a card (dedupe)', async () => {
    expect(await outcomeOf(fields.tokenize(card()))).toEqual(DENIED);
    expect(await outcomeOf(fields.tokenize(card({ provisional: false, dedupe: true })))).toEqual(DENIED);
    expect(await outcomeOf(fields.tokenize(card({ provisional: true, dedupe: true })))).toEqual(DENIED);
  });

  it('is refused every other RPC, which leaves the token as it was', async () => {
    const { token } = await storedCard();
    const provisional = (await fields.tokenize(card({ provisional: true }))).token;
    expect(await outcomeOf(fields.tokenizeBatch())).toEqual(DENIED);
    expect(await outcomeOf(fields.getToken(token))).toEqual(DENIED);
    expect(await outcomeOf(fields.deleteToken(token))).toEqual(DENIED);
    expect(await outcomeOf(fields.retainToken(provisional))).toEqual(DENIED);
    expect(await outcomeOf(fields.render(token))).toEqual(DENIED);
    expect(await outcomeOf(fields.renderBatch(token))).toEqual(DENIED);
    expect(await outcomeOf(fields.preview(token))).toEqual(DENIED);
    expect(await outcomeOf(fields.updateToken(token))).toEqual(DENIED);
    const stored = await asMerchant('GET', `/v1/token/${token}`);
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({ expiryMonth: 12, cvvAvailable: false });
    expect((await asMerchant('GET', `/v1/token/${provisional}`)).body.provisional).toBe(true);
  });

  it('attaches a CVC under a grant the merchant’s server opened, once, answered without fingerprint', async () => {
    const { token } = await storedCard();
    const secret = await openGrant(token);
    const record = await fields.attachCvv(token, secret);
    expect(record).toMatchObject({ token, cvvAvailable: true, fingerprint: '', bin: '' });
    expect((await asMerchant('GET', `/v1/token/${token}`)).body.cvvAvailable).toBe(true);
    expect(await outcomeOf(fields.attachCvv(token, secret))).toEqual({ status: grpc.status.FAILED_PRECONDITION, code: 'cvc_session_used' });
  });

  it('is refused a CVC attach without a grant, or under an unknown one or one of another token', async () => {
    const { token } = await storedCard();
    const other = await storedCard();
    const otherGrant = await openGrant(other.token);
    expect(await outcomeOf(fields.attachCvv(token))).toEqual({ status: grpc.status.PERMISSION_DENIED, code: 'cvc_session_required' });
    expect(await outcomeOf(fields.attachCvv(token, `cvcs_${'A'.repeat(43)}`))).toEqual({
      status: grpc.status.NOT_FOUND,
      code: 'cvc_session_not_found',
    });
    expect(await outcomeOf(fields.attachCvv(token, otherGrant))).toEqual({ status: grpc.status.NOT_FOUND, code: 'cvc_session_not_found' });
    expect((await asMerchant('GET', `/v1/token/${token}`)).body.cvvAvailable).toBe(false);
    // The grant of the other token was not used up by the refusal.
    expect((await fields.attachCvv(other.token, otherGrant)).cvvAvailable).toBe(true);
  });

  it('may ask the vault’s health, Check and Watch (it reveals only SERVING or NOT_SERVING)', async () => {
    expect(await checkHealth(healthAs('fields'), 'tessera.vault.v1.Vault', 5000)).toBe('SERVING');
    const status = await new Promise<string>((resolve, reject) => {
      const stream = healthAs('fields').Watch({ service: '' });
      stream.on('data', (res: { status: string }) => {
        resolve(res.status);
        stream.cancel();
      });
      stream.on('error', (err: grpc.ServiceError) => {
        if (err.code !== grpc.status.CANCELLED) reject(err);
      });
    });
    expect(status).toBe('SERVING');
  });

  it('leaves the gateway identity what it had: a CVC attached without a grant, as POST /v1/token/{token}/cvc does', async () => {
    const { token } = await storedCard();
    const record = await rpcs(vaultAs('gateway')).attachCvv(token);
    expect(record).toMatchObject({ token, cvvAvailable: true });
    expect(record.fingerprint).not.toBe('');
    const res = await asMerchant('POST', `/v1/token/${token}/cvc`, { cvv: '456' });
    expect(res.status).toBe(200);
  });
});

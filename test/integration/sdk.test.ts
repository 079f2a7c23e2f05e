import {
  Tessera,
  TesseraAuthenticationError,
  TesseraInvalidRequestError,
  TesseraNotFoundError,
  type CardInput,
} from '../../packages/sdk/src';
import { aCard as aHarnessCard, type ApiKey, findCardDataInLogs, TEST_CARDS, TEST_CVV, useSharedStack } from './harness';

jest.setTimeout(60_000);

const env = useSharedStack({ psp: true });
const acmeId = env.merchant('acme');

/** The SDK against the real gateway, vault and proxy processes, with a recording PSP. */

let key: ApiKey;
let tessera: Tessera;

/** The harness's card, typed as the SDK takes it. */
const aCard = (overrides: Partial<CardInput> = {}): CardInput => aHarnessCard(overrides) as unknown as CardInput;

const chargeBody = JSON.stringify({
  amount: 1000,
  card: { number: '[CARD_NUMBER]', exp: '[CARD_EXPIRY_MONTH]/[CARD_EXPIRY_YEAR]', cvc: '[CARD_CVV]', name: '[CARD_HOLDER]' },
  note: '[CARD_NUMBR]',
});

beforeAll(async () => {
  key = env.stack.createKey(acmeId, 'test');
  tessera = new Tessera(key.apiKey, { baseUrl: `${env.stack.baseUrl}/v1`, timeoutMs: 20_000 });
});

beforeEach(() => env.psp.reset());

describe('@tessera/sdk against the running services', () => {
  it('creates, reads and deletes a token, and a deleted token is a typed not-found error', async () => {
    const created = await tessera.tokens.create(aCard());
    expect(created).toMatchObject({ last4: '4242', brand: 'visa', cvvAvailable: true, holderNameAvailable: true });
    expect(created.token).toMatch(/^tok\./);
    expect(await tessera.tokens.get(created.token)).toEqual(created);
    await tessera.tokens.delete(created.token);
    const err = await tessera.tokens.get(created.token).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TesseraNotFoundError);
    expect(err).toMatchObject({ status: 404, code: 'token_not_found', type: 'not_found_error', requestId: expect.stringMatching(/\S/) });
  });

  it('deduplicates, updates and re-collects the CVC of a token, typed with its bin and fingerprint', async () => {
    const created = await tessera.tokens.create({ ...aCard({ number: TEST_CARDS.mastercard, cvv: undefined }), dedupe: true });
    const bin: string | null = created.bin;
    const fingerprint: string | null = created.fingerprint;
    expect({ bin, fingerprint }).toEqual({ bin: '555555', fingerprint: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/) });
    const again = await tessera.tokens.create({ ...aCard({ number: TEST_CARDS.mastercard, cvv: undefined }), dedupe: true });
    expect(again.token).toBe(created.token);

    const updated = await tessera.tokens.update(created.token, { expiryMonth: 6, expiryYear: new Date().getUTCFullYear() + 5 });
    expect(updated).toMatchObject({ token: created.token, expiryMonth: 6, fingerprint });
    const refused = await tessera.tokens.update(created.token, { expiryMonth: 1, expiryYear: 2020 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TesseraInvalidRequestError);
    expect(refused).toMatchObject({ status: 400, code: 'card_expired' });

    expect(created.cvvAvailable).toBe(false);
    expect(await tessera.tokens.recollectCvc(created.token, '046', { idempotencyKey: `cvc-${created.token}` })).toMatchObject({
      cvvAvailable: true,
    });
    const charge = () =>
      tessera.proxy.forward({
        method: 'post',
        token: created.token,
        pspUrl: `${env.psp.url}/v1/charges`,
        pspHeaders: { 'content-type': 'application/json' },
        pspBody: '{"cvc":"[CARD_CVV]","exp":"[CARD_EXPIRY_MONTH]"}',
      });
    expect((await charge()).status).toBe(200);
    expect(JSON.parse(env.psp.requests[0]?.body.toString('utf8') ?? '{}')).toEqual({ cvc: '046', exp: '06' });
    expect(await charge().catch((e: unknown) => e)).toMatchObject({ status: 422, code: 'cvv_unavailable' });
  });

  it('forwards to the PSP and returns its status, body and Tessera timing headers', async () => {
    const { token } = await tessera.tokens.create(aCard());
    env.psp.reply = (_req, res) => {
      res.writeHead(201, { 'content-type': 'application/json', 'x-psp-trace': 'abc' });
      res.end('{"id":"ch_1","status":"succeeded"}');
    };
    const res = await tessera.proxy.forward(
      {
        method: 'post',
        token,
        pspUrl: `${env.psp.url}/v1/charges`,
        pspHeaders: { 'Content-Type': 'application/json' },
        pspBody: chargeBody,
      },
      { idempotencyKey: 'order-1-attempt-1', requestId: 'sdk-it-1' },
    );
    expect(res.status).toBe(201);
    expect(res.json()).toEqual({ id: 'ch_1', status: 'succeeded' });
    expect(res.headers.get('x-psp-trace')).toBe('abc');
    expect(res.requestId).toBe('sdk-it-1');
    expect(res.pspMs).toBeGreaterThanOrEqual(0);
    expect(res.totalMs).toBeGreaterThanOrEqual(res.pspMs!);
    const sent = JSON.parse(env.psp.requests[0]!.body.toString('utf8'));
    expect(sent.card).toEqual({ number: TEST_CARDS.visa, exp: `12/${aCard().expiryYear}`, cvc: TEST_CVV, name: 'Ada Lovelace' });
  });

  it('returns a PSP decline (402) as a response, not an exception', async () => {
    const { token } = await tessera.tokens.create(aCard({ number: TEST_CARDS.visaDeclined }));
    env.psp.reply = (_req, res) => {
      res.writeHead(402, { 'content-type': 'application/json' });
      res.end('{"error":{"code":"card_declined"}}');
    };
    const res = await tessera.proxy.forward({ method: 'post', token, pspUrl: `${env.psp.url}/v1/charges`, pspBody: '[CARD_NUMBER]' });
    expect(res.status).toBe(402);
    expect(res.headers.get('x-tessera-error')).toBeNull();
    expect(res.json()).toEqual({ error: { code: 'card_declined' } });
  });

  it('dry-runs a charge: masked body, unknown placeholders, allowed destination, nothing reaches the PSP, and the CVV stays usable', async () => {
    const { token } = await tessera.tokens.create(aCard());
    const result = await tessera.proxy.dryRun({
      method: 'post',
      token,
      pspUrl: `${env.psp.url}/v1/charges`,
      pspHeaders: { 'Content-Type': 'application/json', Authorization: 'Bearer sk_psp_secret' },
      pspBody: chargeBody,
    });
    expect(env.psp.requests).toHaveLength(0);
    expect(env.psp.connections).toBe(0);
    expect(result.destination).toEqual({ allowed: true });
    expect(result.wouldSend).toBe(true);
    expect(result.request.method).toBe('POST');
    expect(result.request.headers).toEqual({ 'Content-Type': 'application/json', Authorization: 'Bearer ***' });
    expect(JSON.parse(result.request.body!)).toEqual({
      amount: 1000,
      card: { number: '424242******4242', exp: `12/${aCard().expiryYear}`, cvc: '***', name: 'A*** L***' },
      note: '[CARD_NUMBR]',
    });
    expect(result.placeholders).toEqual({
      filled: ['[CARD_NUMBER]', '[CARD_EXPIRY_MONTH]', '[CARD_EXPIRY_YEAR]', '[CARD_CVV]', '[CARD_HOLDER]'],
      unfillable: [],
      unknown: ['[CARD_NUMBR]'],
    });

    // A dry run does not use up the CVV: the real call that follows still has it.
    await tessera.proxy.forward({
      method: 'post',
      token,
      pspUrl: `${env.psp.url}/v1/charges`,
      pspHeaders: { 'Content-Type': 'application/json' },
      pspBody: chargeBody,
    });
    expect(JSON.parse(env.psp.requests[0]!.body.toString('utf8')).card.cvc).toBe(TEST_CVV);
  });

  it('dry-run reports a refused destination and an unfillable holder name, and would not send', async () => {
    const { token } = await tessera.tokens.create(aCard({ holderName: undefined }));
    const result = await tessera.proxy.dryRun({
      method: 'post',
      token,
      pspUrl: 'http://169.254.169.254/latest/meta-data',
      pspHeaders: { 'content-type': 'application/x-www-form-urlencoded' },
      pspBody: 'name=[CARD_HOLDER]',
    });
    expect(result.wouldSend).toBe(false);
    expect(result.destination).toMatchObject({ allowed: false, code: 'psp_destination_forbidden' });
    expect(result.placeholders.unfillable).toEqual([
      { placeholder: '[CARD_HOLDER]', code: 'holder_name_unavailable', message: expect.any(String) },
    ]);
  });

  it('raises typed errors for bad input and a bad key', async () => {
    const invalid = await tessera.tokens.create(aCard({ number: '4242424242424241' })).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(TesseraInvalidRequestError);
    expect(invalid).toMatchObject({ status: 400, code: 'card_number_invalid', param: 'number' });
    const unauthenticated = await new Tessera('tsk_test_00000000000000000000000000000000', { baseUrl: `${env.stack.baseUrl}/v1` }).tokens
      .get('tok.x')
      .catch((e: unknown) => e);
    expect(unauthenticated).toBeInstanceOf(TesseraAuthenticationError);
    expect(unauthenticated).toMatchObject({ status: 401, code: 'api_key_invalid' });
  });

  it('leaves no card number or CVV in any service log', () => {
    expect(findCardDataInLogs(env.stack.logs(), [TEST_CARDS.visa, TEST_CARDS.visaDeclined], [TEST_CVV])).toEqual([]);
  });
});

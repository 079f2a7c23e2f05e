/**
 * Issue 15, items 1-4: tokens that live like cards. A token carries the card's BIN and a keyed
 * fingerprint (same card, merchant and mode: same value); `dedupe` answers the merchant's existing
 * token; PATCH changes a re-issued card's expiry and holder; a re-collected CVV is used once.
 * Real gateway, vault, proxy and Redis; the PSP is a recorder.
 */
import { aCard, apiClient, findCardDataInLogs, TEST_CARDS, TEST_CVV, useSharedStack } from './harness';

jest.setTimeout(60_000);

/** Not a published test card: only a live key may tokenize it. */
const LIVE_PAN = '4111111111111111';
/** Leading zeros, so a log scan cannot confuse them with numbers that happen to be in a log line. */
const RECOLLECTED_CVV = '037';

const env = useSharedStack({ psp: true });
const acmeId = env.merchant('acme');
const globexId = env.merchant('globex');
const hooliId = env.merchant('hooli');
const initechId = env.merchant('initech');

type Client = ReturnType<typeof apiClient>;
let acmeTest: Client;
let acmeLive: Client;
let globexTest: Client;
let globexLive: Client;

beforeAll(() => {
  acmeTest = apiClient(env.stack, env.stack.createKey(acmeId, 'test').apiKey);
  acmeLive = apiClient(env.stack, env.stack.createKey(acmeId, 'live').apiKey);
  globexTest = apiClient(env.stack, env.stack.createKey(globexId, 'test').apiKey);
  globexLive = apiClient(env.stack, env.stack.createKey(globexId, 'live').apiKey);
});

beforeEach(() => env.psp.reset());

const futureYear = (ahead: number): number => new Date().getUTCFullYear() + ahead;

async function create(call: Client, card: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await call('POST', '/v1/token', aCard(card));
  expect(res.status).toBe(201);
  return res.body as Record<string, any>;
}

/** A proxy call whose body asks for the given placeholders; answers the status and what the PSP received. */
async function render(
  call: Client,
  token: string,
  template: Record<string, string>,
): Promise<{ status: number; code: string | null; sent: any }> {
  const before = env.psp.requests.length;
  const res = await call('POST', '/v1/proxy', {
    method: 'post',
    token,
    pspUrl: `${env.psp.url}/v1/charges`,
    pspHeaders: { 'content-type': 'application/json' },
    pspBody: JSON.stringify(template),
  });
  const request = env.psp.requests[before];
  return {
    status: res.status,
    code: res.headers.get('x-tessera-error'),
    sent: request === undefined ? undefined : JSON.parse(request.body.toString('utf8')),
  };
}

describe('fingerprint and BIN', () => {
  it('are equal for the same card and merchant, and differ across merchants, cards and modes', async () => {
    const first = await create(acmeTest, { number: TEST_CARDS.visa });
    const again = await create(acmeTest, { number: '4242 4242 4242 4242', expiryYear: futureYear(5) });
    const otherMerchant = await create(globexTest, { number: TEST_CARDS.visa });
    const otherCard = await create(acmeTest, { number: TEST_CARDS.mastercard });
    const live = await create(acmeLive, { number: LIVE_PAN });
    const liveAgain = await create(acmeLive, { number: LIVE_PAN });
    const liveOtherMerchant = await create(globexLive, { number: LIVE_PAN });

    expect(first.fingerprint).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(again.token).not.toBe(first.token);
    expect(again.fingerprint).toBe(first.fingerprint);
    expect(liveAgain.fingerprint).toBe(live.fingerprint);
    // A card number can be held in one mode only (test keys take only test cards), so "across
    // modes" is every test fingerprint against every live one; the HMAC binds the mode as well.
    const distinct = [first, otherMerchant, otherCard, live, liveOtherMerchant].map((record) => record.fingerprint);
    expect(new Set(distinct).size).toBe(distinct.length);

    expect(first).toMatchObject({ bin: '424242', last4: '4242' });
    expect(otherCard).toMatchObject({ bin: '555555', last4: '4444' });
    expect(live).toMatchObject({ bin: '411111' });
    const read = await acmeTest('GET', `/v1/token/${first.token}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ token: first.token, bin: '424242', fingerprint: first.fingerprint });
    // Nothing beyond the first six digits: the fingerprint is not the number, nor any plain hash of it.
    expect(JSON.stringify(read.body)).not.toContain(TEST_CARDS.visa.slice(0, 7));
  });
});

describe('dedupe', () => {
  it("answers the merchant's existing token for the card (200), updated with the new expiry, holder name and CVV", async () => {
    // Made without dedupe: still the token a later dedupe create answers.
    const original = await create(globexTest, { number: TEST_CARDS.amex, cvv: undefined, holderName: 'Old Name' });
    expect(original.cvvAvailable).toBe(false);
    const res = await globexTest(
      'POST',
      '/v1/token',
      aCard({ number: TEST_CARDS.amex, expiryMonth: 3, expiryYear: futureYear(6), holderName: 'New Name', cvv: '0461', dedupe: true }),
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      token: original.token,
      fingerprint: original.fingerprint,
      expiryMonth: 3,
      expiryYear: futureYear(6),
      cvvAvailable: true,
    });
    const rendered = await render(globexTest, original.token, { month: '[CARD_EXPIRY_MONTH]', name: '[CARD_HOLDER]', cvc: '[CARD_CVV]' });
    expect(rendered).toMatchObject({ status: 200, sent: { month: '03', name: 'New Name', cvc: '0461' } });

    // Another merchant, or the same merchant without dedupe, gets a token of its own.
    const elsewhere = await acmeTest('POST', '/v1/token', aCard({ number: TEST_CARDS.amex, cvv: '0461', dedupe: true }));
    expect(elsewhere.status).toBe(201);
    expect(elsewhere.body.token).not.toBe(original.token);
    expect((await create(globexTest, { number: TEST_CARDS.amex, cvv: '0461' })).token).not.toBe(original.token);
  });

  it('answers a token made without dedupe until it is deleted, then makes a new one', async () => {
    const merchant = apiClient(env.stack, env.stack.createKey(hooliId, 'test').apiKey);
    const plain = await create(merchant, { number: TEST_CARDS.mastercard });
    const found = await merchant('POST', '/v1/token', aCard({ number: TEST_CARDS.mastercard, dedupe: true }));
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject({ token: plain.token, fingerprint: plain.fingerprint });

    expect((await merchant('DELETE', `/v1/token/${plain.token}`)).status).toBe(204);
    const made = await merchant('POST', '/v1/token', aCard({ number: TEST_CARDS.mastercard, dedupe: true }));
    expect(made.status).toBe(201);
    expect(made.body.token).not.toBe(plain.token);
    expect(made.body.fingerprint).toBe(plain.fingerprint);
    const again = await merchant('POST', '/v1/token', aCard({ number: TEST_CARDS.mastercard, dedupe: true }));
    expect({ status: again.status, token: again.body.token }).toEqual({ status: 200, token: made.body.token });
  });

  it('gives one token to concurrent dedupe creates of the same card, and a new one once that token is deleted', async () => {
    const merchant = apiClient(env.stack, env.stack.createKey(initechId, 'test').apiKey);
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => merchant('POST', '/v1/token', aCard({ number: TEST_CARDS.visaDeclined, dedupe: true }))),
    );
    const tokens = new Set(answers.map((res) => res.body.token as string));
    expect(tokens.size).toBe(1);
    expect(answers.filter((res) => res.status === 201)).toHaveLength(1);
    expect(answers.filter((res) => res.status === 200)).toHaveLength(11);
    const [token] = [...tokens] as [string];

    expect((await merchant('DELETE', `/v1/token/${token}`)).status).toBe(204);
    const after = await merchant('POST', '/v1/token', aCard({ number: TEST_CARDS.visaDeclined, dedupe: true }));
    expect(after.status).toBe(201);
    expect(after.body.token).not.toBe(token);
  });

  it('is refused when it is not a boolean', async () => {
    const res = await acmeTest('POST', '/v1/token', aCard({ dedupe: 'yes' }));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'parameter_invalid', param: 'dedupe' });
  });
});

describe('PATCH /v1/token/{token}', () => {
  it('updates the stored card, and the next proxy call renders the new expiry and holder name', async () => {
    const { token } = await create(acmeTest, { number: TEST_CARDS.mastercard, expiryMonth: 1, expiryYear: futureYear(1) });
    const res = await acmeTest('PATCH', `/v1/token/${token}`, { expiryMonth: 9, expiryYear: futureYear(4), holderName: 'Grace Hopper' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token, last4: '4444', bin: '555555', expiryMonth: 9, expiryYear: futureYear(4) });
    expect(Date.parse(res.body.expiresAt as string)).toBeGreaterThan(Date.UTC(futureYear(4), 8, 30));
    expect((await acmeTest('GET', `/v1/token/${token}`)).body).toMatchObject({ expiryMonth: 9, expiryYear: futureYear(4) });

    const rendered = await render(acmeTest, token, {
      number: '[CARD_NUMBER]',
      month: '[CARD_EXPIRY_MONTH]',
      year: '[CARD_EXPIRY_YEAR]',
      name: '[CARD_HOLDER]',
    });
    expect(rendered).toMatchObject({
      status: 200,
      sent: { number: TEST_CARDS.mastercard, month: '09', year: String(futureYear(4)), name: 'Grace Hopper' },
    });

    // The holder name alone.
    expect((await acmeTest('PATCH', `/v1/token/${token}`, { holderName: 'G. Hopper' })).body).toMatchObject({ expiryMonth: 9 });
    expect((await render(acmeTest, token, { name: '[CARD_HOLDER]' })).sent).toEqual({ name: 'G. Hopper' });
  });

  it('applies the rules of create, never changes the number, and finds only its own tokens', async () => {
    const { token } = await create(acmeTest, { number: TEST_CARDS.visa });
    const refused = async (body: unknown, status: number, code: string, param?: string): Promise<void> => {
      const res = await acmeTest('PATCH', `/v1/token/${token}`, body);
      expect({ status: res.status, code: res.body?.error?.code, param: res.body?.error?.param }).toEqual({ status, code, param });
    };
    await refused({ expiryMonth: 1, expiryYear: 2020 }, 400, 'card_expired', 'expiryYear');
    await refused({ expiryMonth: 13, expiryYear: futureYear(2) }, 400, 'parameter_invalid', 'expiryMonth');
    await refused({ expiryMonth: 5 }, 400, 'parameter_missing', 'expiryYear');
    await refused({ number: TEST_CARDS.mastercard }, 400, 'parameter_unknown', 'number');
    await refused({ holderName: '' }, 400, 'parameter_invalid', 'holderName');
    await refused({}, 400, 'invalid_request', undefined);
    const other = await globexTest('PATCH', `/v1/token/${token}`, { holderName: 'Mallory' });
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('token_not_found');
    expect((await render(acmeTest, token, { number: '[CARD_NUMBER]', name: '[CARD_HOLDER]' })).sent).toEqual({
      number: TEST_CARDS.visa,
      name: 'Ada Lovelace',
    });
  });
});

describe('CVC re-collection from a server', () => {
  it('renders a re-collected CVC once, then 422 cvv_unavailable', async () => {
    const { token } = await create(acmeTest, { number: TEST_CARDS.visa, cvv: undefined });
    expect(await render(acmeTest, token, { cvc: '[CARD_CVV]' })).toMatchObject({ status: 422, code: 'cvv_unavailable' });

    const attached = await acmeTest('POST', `/v1/token/${token}/cvc`, { cvv: RECOLLECTED_CVV });
    expect(attached.status).toBe(200);
    expect(attached.body).toMatchObject({ token, cvvAvailable: true });
    expect((await acmeTest('GET', `/v1/token/${token}`)).body.cvvAvailable).toBe(true);

    expect(await render(acmeTest, token, { cvc: '[CARD_CVV]' })).toMatchObject({ status: 200, sent: { cvc: RECOLLECTED_CVV } });
    expect(await render(acmeTest, token, { cvc: '[CARD_CVV]' })).toMatchObject({ status: 422, code: 'cvv_unavailable', sent: undefined });
    expect((await acmeTest('GET', `/v1/token/${token}`)).body.cvvAvailable).toBe(false);
  });

  it("checks the CVC against the card's brand, pads an integer, and answers only the token's own merchant", async () => {
    const amex = await create(acmeLive, { number: '371449635398431', cvv: undefined });
    const short = await acmeLive('POST', `/v1/token/${amex.token}/cvc`, { cvv: '123' });
    expect(short.status).toBe(400);
    expect(short.body.error).toMatchObject({ code: 'cvv_invalid', param: 'cvv', message: 'An amex CVV has 4 digits.' });
    expect((await acmeLive('POST', `/v1/token/${amex.token}/cvc`, { cvv: 42 })).status).toBe(200);

    const { token } = await create(acmeTest, { number: TEST_CARDS.visa, cvv: undefined });
    expect((await acmeTest('POST', `/v1/token/${token}/cvc`, {})).body.error).toMatchObject({ code: 'parameter_missing', param: 'cvv' });
    expect((await globexTest('POST', `/v1/token/${token}/cvc`, { cvv: '123' })).status).toBe(404);
    expect((await acmeLive('POST', `/v1/token/${token}/cvc`, { cvv: '123' })).status).toBe(404);
    expect((await acmeTest('GET', `/v1/token/${token}`)).body.cvvAvailable).toBe(false);
  });
});

it('no card number or CVV of this file appears in any service log', () => {
  const pans = [TEST_CARDS.visa, TEST_CARDS.mastercard, TEST_CARDS.amex, TEST_CARDS.visaDeclined, LIVE_PAN, '371449635398431'];
  expect(findCardDataInLogs(env.stack.logs(), pans, [TEST_CVV, RECOLLECTED_CVV, '0461'])).toEqual([]);
});

/**
 * Property-based fuzzing of the REST surface against the real services (fast-check): arbitrary
 * JSON, wrong types, huge strings, any Unicode, prototype-pollution keys. Whatever arrives, the
 * gateway never answers 500, every error it makes is the documented envelope with
 * x-tessera-error, and no response or log line carries a card number: not even one written with
 * `_`, mixed separators, Amex's 4-6-5 grouping or as a 12-digit Maestro, put in any position the
 * gateway echoes (token, header names and values, pspUrl host, path and query, unknown fields,
 * x-request-id, Idempotency-Key, admin parameters). The one detector (mayHoldCardNumber) judges.
 *
 * Every pspUrl the properties produce is either a fixed loopback / IP-literal address or text
 * that does not parse as an http(s) URL, so no fuzz case triggers a DNS lookup or leaves loopback.
 */
import fc from 'fast-check';
import { mayHoldCardNumber } from '@tessera/common';
import { loggedIn, type AdminClient } from './adminClient';
import { apiClient, type ApiKey, findCardDataInLogs, TEST_CARDS, TEST_CVV, useSharedStack } from './harness';
import { CARD_SHAPES, cardShape } from './cardShapes';

jest.setTimeout(180_000);

const env = useSharedStack({ psp: true });
const acmeId = env.merchant('acme');
const globexId = env.merchant('globex');
const fencedId = env.merchant('fenced');

const NUM_RUNS = 150;
const PANS = Object.values(TEST_CARDS);
const spaced = (pan: string) => pan.replace(/(\d{4})(?=\d)/g, '$1 ');

let acme: ApiKey;
let token: string;
let otherMerchantsToken: string;
/** A merchant whose PSP host allowlist refuses every fuzzed host before any DNS lookup. */
let fenced: ApiKey;
let fencedToken: string;
let operator: AdminClient;

beforeAll(async () => {
  acme = env.stack.createKey(acmeId, 'test');
  const globex = env.stack.createKey(globexId, 'test');
  const card = {
    number: TEST_CARDS.visa,
    holderName: 'Ada Lovelace',
    expiryMonth: 12,
    expiryYear: new Date().getUTCFullYear() + 3,
    cvv: TEST_CVV,
  };
  token = (await apiClient(env.stack, acme.apiKey)('POST', '/v1/token', card)).body.token;
  otherMerchantsToken = (await apiClient(env.stack, globex.apiKey)('POST', '/v1/token', { ...card, number: TEST_CARDS.mastercard })).body
    .token;
  fenced = env.stack.createKey(fencedId, 'test');
  env.stack.cli(['psp-hosts', 'set', '--merchant', fencedId, 'psp.example']);
  fencedToken = (await apiClient(env.stack, fenced.apiKey)('POST', '/v1/token', card)).body.token;
  env.stack.createOperator(`${env.merchant('fuzz')}@tessera.test`, 'correct horse battery staple', null);
  operator = await loggedIn(env.stack.adminUrl, `${env.merchant('fuzz')}@tessera.test`, 'correct horse battery staple');
});

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

async function send(
  path: string,
  body: string,
  contentType: string | undefined,
  extraHeaders: Record<string, string> = {},
  apiKey = acme.apiKey,
  method = 'POST',
): Promise<Answer> {
  const headers: Record<string, string> = { 'x-api-key': apiKey, ...extraHeaders };
  if (contentType !== undefined) headers['content-type'] = contentType;
  const res = await fetch(`${env.stack.baseUrl}${path}`, { method, headers, body });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The contract every answer keeps, whatever was sent. */
function expectWellFormedAnswer(res: Answer, path: string): void {
  // 502 only where a PSP is involved: a fuzzed destination such as a closed loopback port.
  if (res.status >= 500) expect({ path, status: res.status }).toEqual({ path: '/v1/proxy', status: 502 });
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  // A PSP's own answer is passed through as it is (x-tessera-psp-ms says the PSP answered).
  const fromPsp = path === '/v1/proxy' && res.headers.get('x-tessera-psp-ms') !== null;
  if (res.status >= 400 && !fromPsp) {
    const code = res.headers.get('x-tessera-error');
    expect(code).toEqual(expect.any(String));
    const body = JSON.parse(res.text);
    expect(Object.keys(body)).toEqual(['error']);
    expect(body.error).toMatchObject({
      code,
      type: expect.any(String),
      message: expect.any(String),
      requestId: res.headers.get('x-request-id'),
    });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  }
  for (const pan of PANS) {
    expect(res.text).not.toContain(pan);
    expect(res.text).not.toContain(spaced(pan));
  }
  expectNoCardNumberEcho(res);
}

/** Neither the body nor any header holds anything the detector calls card-number-like (the offending text is shown). */
function expectNoCardNumberEcho(res: Answer): void {
  const headers = [...res.headers].map(([name, value]) => `${name}: ${value}`);
  for (const text of [...textsAClientReads(res.text), ...headers]) {
    for (const shape of CARD_SHAPES) expect(text).not.toContain(shape);
    expect(mayHoldCardNumber(text) ? text : 'no card number').toBe('no card number');
  }
}

/**
 * What a client reads in a JSON answer is its decoded strings, not the escapes that carry them: the
 * hex digits of `\u0004` read beside a preview's `2036424242` made a Luhn-valid run that no client
 * ever sees. So a JSON body is judged by every decoded leaf, and by its text with each escape read
 * as a separator (a number split across two fields still counts).
 */
function textsAClientReads(body: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [body];
  }
  const leaves: string[] = [];
  const collect = (value: unknown): void => {
    if (typeof value === 'string' || typeof value === 'number') leaves.push(String(value));
    else if (value !== null && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        leaves.push(key);
        collect(inner);
      }
    }
  };
  collect(parsed);
  return [body.replace(/\\u[0-9a-fA-F]{4}/g, ' '), ...leaves];
}

// ---- arbitraries --------------------------------------------------------------------------

const PROTO_KEYS = ['__proto__', 'constructor', 'prototype'];

/** Strings of every kind: any code point (lone surrogates too), graphemes, card numbers, huge. */
const anyString = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'binary', maxLength: 300 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 50 }) },
  { weight: 2, arbitrary: fc.constantFrom(...PANS, ...PANS.map(spaced), TEST_CVV, '[CARD_NUMBER]', '', ' ', '\u0000', '\uD800') },
  { weight: 2, arbitrary: cardShape },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 300_000 }).map((n) => 'x'.repeat(n)) },
);

/** Any JSON value, with the strings above inside. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 3, arbitrary: anyString },
  { weight: 1, arbitrary: fc.constantFrom(0, -1, 1.5, 1e308, -0, 12, 2030, Number.MAX_SAFE_INTEGER + 2, true, false, null) },
  { weight: 1, arbitrary: fc.constantFrom({ holderName: 'Polluted', cvv: '999', polluted: true }, { prototype: { polluted: true } }) },
);

/** A JSON object written as text, so `__proto__` stays an own key exactly as an attacker sends it. */
function objectText(entries: ReadonlyArray<readonly [string, unknown]>): string {
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'}`).join(',')}}`;
}

const extraKey = fc.oneof(fc.constantFrom(...PROTO_KEYS, ...PANS), cardShape, fc.string({ unit: 'binary', maxLength: 30 }));

/** Fields the endpoint knows (each with a good or an arbitrary value), plus strays, in random order. */
function requestObject(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<string> {
  const known = Object.entries(fields).map(([name, good]) =>
    fc.option(fc.tuple(fc.constant(name), fc.oneof(good, anyValue)), { nil: undefined, freq: 4 }),
  );
  return fc
    .tuple(fc.tuple(...known), fc.array(fc.tuple(extraKey, anyValue), { maxLength: 3 }), fc.boolean())
    .map(([present, extras, extrasFirst]) => {
      const own = present.filter((e): e is [string, unknown] => e !== undefined);
      return objectText(extrasFirst ? [...extras, ...own] : [...own, ...extras]);
    });
}

/** Whole bodies: arbitrary JSON of any type, non-JSON text, or an object shaped like a request. */
function anyBody(shaped: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 5, arbitrary: shaped },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? 'null') },
    { weight: 1, arbitrary: anyString },
    { weight: 1, arbitrary: fc.array(fc.tuple(fc.constantFrom(...PROTO_KEYS), anyValue), { minLength: 1, maxLength: 3 }).map(objectText) },
  );
}

const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  {
    weight: 1,
    arbitrary: fc.constantFrom('application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'APPLICATION/JSON'),
  },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

const goodCard = {
  number: fc.constantFrom(...PANS, ...PANS.map(spaced)),
  holderName: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
  expiryMonth: fc.integer({ min: 1, max: 12 }),
  expiryYear: fc.integer({ min: new Date().getUTCFullYear(), max: new Date().getUTCFullYear() + 10 }),
  cvv: fc.oneof(fc.constantFrom('046', '0461'), fc.integer({ min: 0, max: 9999 })),
};

/** Only loopback or IP-literal destinations, or text that is not an http(s) URL: never a DNS lookup. */
function notHttpUrl(s: string): boolean {
  if (!URL.canParse(s)) return true;
  const protocol = new URL(s).protocol;
  return protocol !== 'http:' && protocol !== 'https:';
}
const pspUrl = () =>
  fc.oneof(
    fc.constantFrom(
      `${env.psp.url}/v1/charges`,
      `http://127.0.0.1:${env.psp.port}/?q=[CARD_NUMBER]`,
      `http://0x7f.1:${env.psp.port}/`,
      `http://2130706433:${env.psp.port}/`,
      'http://127.0.0.1:1/',
      'http://10.0.0.1/',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::1]:1/',
      'http://[::ffff:10.0.0.1]/',
      'https://127.0.0.1:1/',
      'ftp://127.0.0.1/',
      'file:///etc/passwd',
    ),
    // In the path and query (an IP-literal host: no DNS), and as a host that is no URL at all.
    cardShape.map((shape) => `http://127.0.0.1:${env.psp.port}/${shape}?card=${encodeURIComponent(shape)}#${shape}`),
    cardShape.map((shape) => `http://${shape.replace(/\D/g, '')}/charge`),
    anyString.filter(notHttpUrl),
  );

const pspHeaders = () =>
  fc.oneof(
    fc.constant({ 'Content-Type': 'application/json' }),
    fc.constant({ 'content-type': 'application/x-www-form-urlencoded' }),
    fc.dictionary(fc.string({ unit: 'binary', maxLength: 20 }), fc.string({ unit: 'binary', maxLength: 40 }), { maxKeys: 3 }),
    fc.dictionary(fc.constantFrom('Content-Type', 'X-Note', 'Authorization'), anyString, { maxKeys: 3 }),
    // A card number as a header name (a valid HTTP token when its separators are - _ . or none).
    fc.dictionary(cardShape, fc.oneof(anyString, cardShape), { minKeys: 1, maxKeys: 2 }),
  );
const pspBody = () =>
  fc.oneof(
    fc.constant('{"n":"[CARD_NUMBER]","c":"[CARD_CVV]","h":"[CARD_HOLDER]","m":"[CARD_EXPIRY_MONTH]","y":"[CARD_EXPIRY_YEAR]"}'),
    fc.constant('number=[CARD_NUMBER]&name=[CARD_HOLDER]'),
    fc
      .array(fc.oneof(fc.constantFrom('[CARD_NUMBER]', '[CARD_HOLDER]', '[CARD_EXPIRY_YEAR]', '[CARD_NUMBR]', '[', ']'), anyString), {
        maxLength: 6,
      })
      .map((p) => p.join('')),
  );

/** Any shape: each field good, arbitrary or missing. */
const proxyRequest = () =>
  requestObject({
    method: fc.constantFrom('post', 'GET', 'put', 'patch', 'delete', 'Post'),
    token: fc.oneof(fc.constantFrom(token, otherMerchantsToken, 'tok.AAAAAAAAAAAAAAAAAAAAAA', 'tok.', ''), cardShape),
    pspUrl: pspUrl(),
    pspHeaders: pspHeaders(),
    pspBody: pspBody(),
  });

/** A valid request to a loopback PSP, with arbitrary headers and body: gets through to the vault's rendering and the PSP. */
const deliverableProxyRequest = () =>
  fc
    .record({
      method: fc.constantFrom('post', 'PUT', 'patch'),
      pspUrl: fc.constantFrom(`${env.psp.url}/v1/charges`, `http://0x7f.1:${env.psp.port}/x`, `http://2130706433:${env.psp.port}/`),
      pspHeaders: pspHeaders(),
      pspBody: pspBody(),
    })
    .map((r) => JSON.stringify({ ...r, token }));

// ---- properties ---------------------------------------------------------------------------

describe('REST surface under arbitrary input (fast-check)', () => {
  it.each([['/v1/token'], ['/v1/proxy'], ['/v1/proxy/dry-run']])(
    'POST %s answers arbitrary bodies without a 500, with the error envelope, and without card numbers',
    async (path) => {
      const shaped = path === '/v1/token' ? requestObject(goodCard) : proxyRequest();
      await fc.assert(
        fc.asyncProperty(anyBody(shaped), contentType, async (body, type) => {
          expectWellFormedAnswer(await send(path, body, type), path);
        }),
        { numRuns: NUM_RUNS },
      );
    },
  );

  it.each([
    ['PATCH', 'the token'],
    ['POST', 'the CVC route of the token'],
  ])('%s on %s answers arbitrary bodies without a 500, with the error envelope, and without card numbers', async (method) => {
    const shaped =
      method === 'PATCH'
        ? requestObject({ expiryMonth: goodCard.expiryMonth, expiryYear: goodCard.expiryYear, holderName: goodCard.holderName })
        : requestObject({ cvv: goodCard.cvv });
    const tokens = fc.constantFrom(token, otherMerchantsToken, 'tok.AAAAAAAAAAAAAAAAAAAAAA');
    await fc.assert(
      fc.asyncProperty(anyBody(shaped), contentType, tokens, async (body, type, target) => {
        const path = method === 'PATCH' ? `/v1/token/${target}` : `/v1/token/${target}/cvc`;
        const res = await send(path, body, type, {}, acme.apiKey, method);
        expect(res.status).not.toBeGreaterThanOrEqual(500);
        expectWellFormedAnswer(res, path);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it.each([['/v1/proxy'], ['/v1/proxy/dry-run']])(
    'POST %s renders and sends deliverable requests with arbitrary PSP headers and bodies without a 500 or a card number in the answer',
    async (path) => {
      const statuses = new Map<number, number>();
      env.psp.reset();
      await fc.assert(
        fc.asyncProperty(deliverableProxyRequest(), async (body) => {
          const res = await send(path, body, 'application/json');
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          expectWellFormedAnswer(res, path);
        }),
        { numRuns: NUM_RUNS },
      );
      // The property reached the deep path: answers from the PSP (or dry-run previews), not only 4xx.
      expect(statuses.get(200) ?? 0).toBeGreaterThan(NUM_RUNS / 10);
      if (path === '/v1/proxy') expect(env.psp.requests.length).toBe(statuses.get(200));
      else expect(env.psp.requests).toHaveLength(0);
    },
  );

  it('tokenizes well-formed cards whatever surrounds them, answering 201 or a 4xx, never echoing the number', async () => {
    await fc.assert(
      fc.asyncProperty(requestObject(goodCard), async (body) => {
        const res = await send('/v1/token', body, 'application/json');
        expectWellFormedAnswer(res, '/v1/token');
        if (res.status === 201) expect(JSON.parse(res.text).token).toMatch(/^tok\./);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('is not polluted by __proto__ or constructor keys: a later card without holder name or CVV stays without them', async () => {
    for (const key of PROTO_KEYS) {
      const polluting = objectText([
        [key, { holderName: 'Polluted', cvv: '999', prototype: { holderName: 'Polluted' } }],
        ['number', TEST_CARDS.visa],
        ['expiryMonth', 12],
        ['expiryYear', new Date().getUTCFullYear() + 3],
      ]);
      expectWellFormedAnswer(await send('/v1/token', polluting, 'application/json'), '/v1/token');
    }
    const plain = await apiClient(env.stack, acme.apiKey)('POST', '/v1/token', {
      number: TEST_CARDS.amex,
      expiryMonth: 12,
      expiryYear: new Date().getUTCFullYear() + 3,
    });
    expect(plain.status).toBe(201);
    expect(plain.body).toMatchObject({ holderNameAvailable: false, cvvAvailable: false });
    expect(Object.keys(plain.body)).not.toContain('polluted');
  });

  it.each([['/v1/token'], ['/v1/proxy'], ['/v1/proxy/dry-run']])(
    'POST %s never echoes a card number sent as x-request-id or Idempotency-Key',
    async (path) => {
      const body = path === '/v1/token' ? requestObject(goodCard) : deliverableProxyRequest();
      await fc.assert(
        fc.asyncProperty(body, cardShape, fc.option(cardShape, { nil: undefined }), async (sent, requestId, idempotencyKey) => {
          const headers: Record<string, string> = { 'x-request-id': requestId };
          if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
          const res = await send(path, sent, 'application/json', headers);
          expectWellFormedAnswer(res, path);
          expect(res.headers.get('x-request-id')).toMatch(/^req_/);
        }),
        { numRuns: NUM_RUNS / 3 },
      );
    },
  );

  it('never echoes a card number in the pspUrl host (refused by the allowlist, before any DNS lookup)', async () => {
    const hostUrl = fc
      .tuple(cardShape, fc.constantFrom('.example', '.psp.example', ''), fc.constantFrom('/charge', `/x?card=1`, ':8443/'))
      .map(([shape, domain, rest]) => `http://${shape}${domain}${rest}`);
    await fc.assert(
      fc.asyncProperty(hostUrl, fc.constantFrom('/v1/proxy', '/v1/proxy/dry-run'), async (pspUrl, path) => {
        const body = JSON.stringify({ method: 'post', token: fencedToken, pspUrl, pspBody: '[CARD_NUMBER]' });
        expectWellFormedAnswer(await send(path, body, 'application/json', {}, fenced.apiKey), path);
      }),
      { numRuns: NUM_RUNS / 3 },
    );
  });

  it('the admin API never echoes a card number given as an unknown parameter, a list entry or a request id', async () => {
    const listEntry = cardShape.chain((shape) => fc.constantFrom(shape, `${shape}/24`, `${shape}.example`, `https://${shape}.example`));
    const adminCall = fc.oneof(
      fc.tuple(cardShape, anyValue).map(([name, value]) => ['POST', '/keys', { merchantId: acmeId, mode: 'test', [name]: value }] as const),
      fc
        .tuple(fc.constantFrom('allowedCidrs', 'allowedDomains', 'allowedOrigins'), fc.array(listEntry, { minLength: 1, maxLength: 3 }))
        .map(([name, entries]) => ['POST', '/keys', { merchantId: acmeId, mode: 'test', [name]: entries }] as const),
      fc
        .array(listEntry, { minLength: 1, maxLength: 3 })
        .map((pspHosts) => ['PUT', `/merchants/${acmeId}/psp-hosts`, { pspHosts }] as const),
      fc
        .tuple(cardShape, anyValue)
        .map(([name, value]) => ['PUT', `/merchants/${acmeId}/psp-hosts`, { pspHosts: [], [name]: value }] as const),
      cardShape.map((merchantId) => ['GET', `/detokenizations?merchantId=${encodeURIComponent(merchantId)}`, undefined] as const),
    );
    await fc.assert(
      fc.asyncProperty(adminCall, cardShape, async ([method, path, body], requestId) => {
        const res = await operator.call(method, path, body, { 'x-request-id': requestId });
        expect(res.status).toBeLessThan(500);
        expectNoCardNumberEcho(res);
      }),
      { numRuns: NUM_RUNS / 3 },
    );
  });

  it('never wrote a card number or the CVV into any service log during the whole run', () => {
    const logs = env.stack.logs();
    expect(findCardDataInLogs(logs, PANS, [TEST_CVV])).toEqual([]);
    expect(CARD_SHAPES.filter((shape) => logs.includes(shape))).toEqual([]);
    expect(logs.split('\n').filter((line) => mayHoldCardNumber(line))).toEqual([]);
  });
});

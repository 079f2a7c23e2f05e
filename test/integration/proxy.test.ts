import {
  aCard,
  apiClient,
  type ApiKey,
  findCardDataInLogs,
  freePort,
  PspRecorder,
  type Stack,
  startStack,
  TEST_AMEX_CVV,
  TEST_CARDS,
  TEST_CVV,
  useStack,
} from './harness';

jest.setTimeout(60_000);

const PSP_TIMEOUT_MS = 1500;
const env = useStack({ env: { PSP_TIMEOUT_MS: String(PSP_TIMEOUT_MS), PROXY_TIMEOUT_MS: '10000' }, psp: true });
let key: ApiKey;
let call: ReturnType<typeof apiClient>;

async function tokenize(overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await call('POST', '/v1/token', aCard(overrides));
  expect(res.status).toBe(201);
  return res.body.token as string;
}

beforeAll(async () => {
  key = env.stack.createKey('acme', 'test');
  call = apiClient(env.stack, key.apiKey);
});

beforeEach(() => env.psp.reset());

describe('POST /v1/proxy', () => {
  it('substitutes every placeholder into a JSON body and sends exactly that to the PSP', async () => {
    const token = await tokenize({ holderName: 'Zoë "Q" O\'Brien \\ 東京', expiryMonth: 3 });
    const pspBody = JSON.stringify({
      amount: 1000,
      card: {
        number: '[CARD_NUMBER]',
        exp_month: '[CARD_EXPIRY_MONTH]',
        exp_year: '[CARD_EXPIRY_YEAR]',
        cvc: '[CARD_CVV]',
        name: '[CARD_HOLDER]',
      },
      note: '[NOT_A_PLACEHOLDER]',
    });
    const res = await call('POST', '/v1/proxy', {
      method: 'post',
      token,
      pspUrl: `${env.psp.url}/v1/charges?expand=card`,
      pspHeaders: { Authorization: 'Bearer sk_psp_123', 'Content-Type': 'application/json', 'X-Custom': 'kept' },
      pspBody,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expect(env.psp.requests).toHaveLength(1);
    const received = env.psp.requests[0]!;
    expect(received.method).toBe('POST');
    expect(received.url).toBe('/v1/charges?expand=card');
    expect(received.headers.authorization).toBe('Bearer sk_psp_123');
    expect(received.headers['x-custom']).toBe('kept');
    expect(received.headers['x-api-key']).toBeUndefined();
    expect(JSON.parse(received.body.toString('utf8'))).toEqual({
      amount: 1000,
      card: {
        number: TEST_CARDS.visa,
        exp_month: '03',
        exp_year: String(aCard().expiryYear),
        cvc: TEST_CVV,
        name: 'Zoë "Q" O\'Brien \\ 東京',
      },
      note: '[NOT_A_PLACEHOLDER]',
    });
  });

  it('form-encodes values for a form body', async () => {
    const token = await tokenize({ holderName: 'Ann & Bob=Smith' });
    const res = await call('POST', '/v1/proxy', {
      method: 'POST',
      token,
      pspUrl: `${env.psp.url}/charges`,
      pspHeaders: { 'content-type': 'application/x-www-form-urlencoded' },
      pspBody: 'amount=1000&card[number]=[CARD_NUMBER]&card[cvc]=[CARD_CVV]&name=[CARD_HOLDER]',
    });
    expect(res.status).toBe(200);
    const form = new URLSearchParams(env.psp.requests[0]!.body.toString('utf8'));
    expect(form.get('card[number]')).toBe(TEST_CARDS.visa);
    expect(form.get('card[cvc]')).toBe(TEST_CVV);
    expect(form.get('name')).toBe('Ann & Bob=Smith');
  });

  it('passes a PSP 402 through unchanged: status, custom headers and a non-JSON body', async () => {
    env.psp.reply = (_req, res) => {
      res.writeHead(402, {
        'content-type': 'text/plain; charset=utf-8',
        'x-psp-decline': 'insufficient_funds',
        link: ['</a>; rel=next', '</b>; rel=prev'],
      });
      res.end('DECLINED: insufficient funds\n');
    };
    const token = await tokenize();
    const res = await call('POST', '/v1/proxy', { method: 'post', token, pspUrl: `${env.psp.url}/pay`, pspBody: 'pan=[CARD_NUMBER]' });
    expect(res.status).toBe(402);
    expect(res.text).toBe('DECLINED: insufficient funds\n');
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('x-psp-decline')).toBe('insufficient_funds');
    expect(res.headers.get('link')).toBe('</a>; rel=next, </b>; rel=prev');
    expect(res.headers.get('x-tessera-error')).toBeNull();
  });

  it('sends a GET without a body', async () => {
    const token = await tokenize();
    const res = await call('POST', '/v1/proxy', { method: 'get', token, pspUrl: `${env.psp.url}/status` });
    expect(res.status).toBe(200);
    expect(env.psp.requests[0]).toMatchObject({ method: 'GET', url: '/status' });
    expect(env.psp.requests[0]!.body.length).toBe(0);
  });

  it('answers 502 psp_unreachable when nothing listens at the PSP address', async () => {
    const token = await tokenize();
    const closedPort = await freePort();
    const res = await call('POST', '/v1/proxy', { method: 'post', token, pspUrl: `http://127.0.0.1:${closedPort}/x`, pspBody: '{}' });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('psp_unreachable');
    expect(res.headers.get('x-tessera-error')).toBe('psp_unreachable');
  });

  it('answers 504 psp_timeout when the PSP is slower than PSP_TIMEOUT_MS', async () => {
    env.psp.reply = (_req, res) => {
      setTimeout(() => {
        if (!res.destroyed) res.end('late');
      }, PSP_TIMEOUT_MS + 2000);
    };
    const token = await tokenize();
    const started = Date.now();
    const res = await call('POST', '/v1/proxy', { method: 'post', token, pspUrl: `${env.psp.url}/slow`, pspBody: '{}' });
    expect(res.status).toBe(504);
    expect(res.body.error.code).toBe('psp_timeout');
    expect(Date.now() - started).toBeLessThan(PSP_TIMEOUT_MS + 2000);
  });

  it('refuses a destination outside PSP_ALLOWED_CIDRS without ever connecting to it', async () => {
    const forbidden = await new PspRecorder('127.0.0.2').start();
    try {
      const token = await tokenize();
      for (const pspUrl of [
        `${forbidden.url}/charge`,
        `http://2130706434:${forbidden.port}/charge`,
        `http://[::ffff:127.0.0.2]:${forbidden.port}/`,
      ]) {
        const res = await call('POST', '/v1/proxy', { method: 'post', token, pspUrl, pspBody: '[CARD_NUMBER]' });
        expect(res.status).toBe(400);
        expect(res.body.error).toMatchObject({ code: 'psp_destination_forbidden', param: 'pspUrl' });
      }
      expect(forbidden.connections).toBe(0);
      expect(forbidden.requests).toHaveLength(0);
    } finally {
      await forbidden.stop();
    }
  });

  it('refuses schemes other than http and https', async () => {
    const token = await tokenize();
    const res = await call('POST', '/v1/proxy', { method: 'post', token, pspUrl: 'file:///etc/passwd', pspBody: '{}' });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('pspUrl');
  });

  it('answers 404 for an unknown token and sends nothing', async () => {
    const res = await call('POST', '/v1/proxy', {
      method: 'post',
      token: 'tok.doesnotexistdoesnotexist',
      pspUrl: `${env.psp.url}/x`,
      pspBody: '[CARD_NUMBER]',
    });
    expect(res.status).toBe(404);
    expect(env.psp.requests).toHaveLength(0);
  });

  it.each<[string, Record<string, unknown>, string, string]>([
    ['a missing method', { method: undefined }, 'method', 'parameter_missing'],
    ['an unsupported method', { method: 'trace' }, 'method', 'parameter_invalid'],
    ['a missing token', { token: undefined }, 'token', 'parameter_missing'],
    ['a missing pspUrl', { pspUrl: undefined }, 'pspUrl', 'parameter_missing'],
    ['a relative pspUrl', { pspUrl: '/charges' }, 'pspUrl', 'parameter_invalid'],
    ['non-string header values', { pspHeaders: { 'x-n': 1 } }, 'pspHeaders', 'parameter_invalid'],
    ['a header with a line break', { pspHeaders: { 'x-n': 'a\r\nx-evil: 1' } }, 'pspHeaders', 'parameter_invalid'],
    ['a numeric pspBody', { pspBody: 42 }, 'pspBody', 'parameter_invalid'],
    ['an unknown field', { retries: 3 }, 'retries', 'parameter_unknown'],
  ])('rejects %s with 400 naming the param', async (_label, overrides, param, code) => {
    const body = { method: 'post', token: 'tok.whateverwhateverwhatever', pspUrl: `${env.psp.url}/x`, pspBody: '{}', ...overrides };
    const res = await call('POST', '/v1/proxy', body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code, param: expect.stringMatching(new RegExp(`^${param}`)) });
    expect(env.psp.connections).toBe(0);
  });
});

describe('many requests at once', () => {
  // Requests that arrive together travel between the services in batches (docs/adr/0007); each
  // must still get its own card, its own PSP answer and its own token, in any arrival order.
  it('keeps 40 concurrent tokenizations and proxy calls apart, each with its own card and answer', async () => {
    const numbers = [TEST_CARDS.visa, TEST_CARDS.mastercard, TEST_CARDS.amex];
    const cards = Array.from({ length: 40 }, (_, i) => ({
      number: numbers[i % numbers.length] as string,
      holderName: `Holder ${i}`,
      ...(numbers[i % numbers.length] === TEST_CARDS.amex ? { cvv: TEST_AMEX_CVV } : {}),
    }));
    const created = await Promise.all(cards.map((card) => call('POST', '/v1/token', aCard(card))));
    expect(created.map((res) => res.status)).toEqual(cards.map(() => 201));
    const tokens = created.map((res) => res.body.token as string);
    expect(new Set(tokens).size).toBe(40);
    const read = await Promise.all(tokens.map((token) => call('GET', `/v1/token/${token}`)));
    expect(read.map((res) => res.body.last4)).toEqual(cards.map((card) => card.number.slice(-4)));

    // The PSP answers in a shuffled order, so streamed answers come back out of order.
    env.psp.reply = (req, res) => {
      const { ref } = JSON.parse(req.body.toString('utf8')) as { ref: number };
      setTimeout(
        () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ ref }));
        },
        (ref * 7) % 25,
      );
    };
    const answers = await Promise.all(
      tokens.map((token, ref) =>
        call('POST', '/v1/proxy', {
          method: 'post',
          token,
          pspUrl: `${env.psp.url}/v1/charges`,
          pspHeaders: { 'Content-Type': 'application/json' },
          pspBody: JSON.stringify({ ref, number: '[CARD_NUMBER]', name: '[CARD_HOLDER]' }),
        }),
      ),
    );
    expect(answers.map((res) => res.status)).toEqual(tokens.map(() => 200));
    expect(answers.map((res) => res.body.ref)).toEqual(tokens.map((_, ref) => ref));
    expect(env.psp.requests).toHaveLength(40);
    for (const received of env.psp.requests) {
      const { ref, number, name } = JSON.parse(received.body.toString('utf8')) as { ref: number; number: string; name: string };
      expect({ number, name }).toEqual({ number: cards[ref]?.number, name: `Holder ${ref}` });
    }
  });
});

describe('CVV retention', () => {
  let shortStack: Stack;
  beforeAll(async () => {
    shortStack = await startStack(env.redis, { env: { CVV_TTL_SECONDS: '1' } });
  });
  afterAll(async () => {
    await shortStack?.stop();
  });

  it('stops substituting [CARD_CVV] once CVV_TTL_SECONDS has passed: 422 cvv_unavailable', async () => {
    const shortKey = shortStack.createKey('acme', 'test');
    const shortCall = apiClient(shortStack, shortKey.apiKey);
    const created = await shortCall('POST', '/v1/token', aCard());
    expect(created.body.cvvAvailable).toBe(true);
    await new Promise((r) => setTimeout(r, 2100));
    const res = await shortCall('POST', '/v1/proxy', {
      method: 'post',
      token: created.body.token,
      pspUrl: `${env.psp.url}/x`,
      pspBody: '{"cvc":"[CARD_CVV]"}',
    });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('cvv_unavailable');
    expect(env.psp.requests).toHaveLength(0);
    // The card itself is still there, so a CVV-less charge works.
    const without = await shortCall('POST', '/v1/proxy', {
      method: 'post',
      token: created.body.token,
      pspUrl: `${env.psp.url}/x`,
      pspBody: '{"n":"[CARD_NUMBER]"}',
    });
    expect(without.status).toBe(200);
    expect((await shortCall('GET', `/v1/token/${created.body.token}`)).body.cvvAvailable).toBe(false);
  });

  it('leaves no card data in the logs', () => {
    expect(findCardDataInLogs(shortStack.logs(), Object.values(TEST_CARDS), [TEST_CVV])).toEqual([]);
  });
});

describe('logs', () => {
  it('never contain a card number, a CVV, a holder name, PSP secrets or the API key', () => {
    const logs = env.stack.logs();
    expect(findCardDataInLogs(logs, Object.values(TEST_CARDS), [TEST_CVV, TEST_AMEX_CVV])).toEqual([]);
    expect(logs).not.toContain('sk_psp_123');
    expect(logs).not.toContain('東京');
    expect(logs).not.toContain(key.apiKey);
  });
});

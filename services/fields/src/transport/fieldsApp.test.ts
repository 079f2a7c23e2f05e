import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { parseCidrList } from '@tessera/common';
import type { TokenizeRequest } from '@tessera/protos';
import { solveProofOfWork, type ProofOfWorkChallenge } from '@tessera/test-support';
import type { HostedPageDeps } from '../app/hostedPage';
import { cardFingerprintKey, FAILED_SUBMISSIONS_PER_FORM_SESSION } from '@tessera/edge';
import { newCsrfToken, newFormSessionId, type FormSessionRecord } from '@tessera/merchant-data';
import { RedisDistinctCardCounter, type DistinctCardCounter } from '@tessera/edge';
import { RedisFormSessionStore } from '@tessera/merchant-data';
import { RedisRateLimitCounter, type RateLimitCounter } from '@tessera/edge';
import { aTokenRecord, captureLogger, startApp, TEST_PEPPER, type RunningApp, type TestResponse } from '../testing/fixtures';
import { useFieldsRedis } from '../testing/redis';
import { BrowserTokenLimiter, type BrowserLimitConfig } from '@tessera/edge';
import { loadCardFieldsAssets, REFUSAL_SCRIPT, REFUSAL_SCRIPT_HASH, type CardFieldsAssets } from './cardFieldsPage';
import { createFieldsApp, type FrameKeyLookup } from './fieldsApp';

const KEY = `tpk_test_${'a'.repeat(38)}`;
const SHOP = 'https://shop.example';

function assetsDir(fieldsJs = 'console.log("fields")'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-fields-'));
  fs.writeFileSync(path.join(dir, 'fields.js'), fieldsJs);
  fs.writeFileSync(path.join(dir, 'hosted.js'), 'console.log("hosted")');
  fs.writeFileSync(path.join(dir, 'tessera.js'), 'window.Tessera = function () {};');
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ 'tessera.js': { integrity: 'sha384-x' } }));
  return dir;
}

describe('fields origin', () => {
  let assets: CardFieldsAssets;
  let running: RunningApp;
  let lookup: FrameKeyLookup;

  beforeAll(async () => {
    assets = loadCardFieldsAssets(assetsDir());
    running = await startApp(createFieldsApp({ assets, lookupKey: (key) => lookup(key), logger: pino({ level: 'silent' }) }));
  });
  afterAll(() => running.close());

  it('serves the fields with the policy of the key in the URL', async () => {
    lookup = async () => ({ allowedOrigins: [SHOP] });
    const res = await running.request('GET', `/fields/v1/card?key=${KEY}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toContain(`frame-ancestors ${SHOP}`);
    expect(res.headers['content-security-policy']).toContain(`script-src ${assets.scriptHash}`);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.toString()).toContain('<script>console.log("fields")</script>');
  });

  /** A refusal page: framable by anyone, no input, only the script (by hash) that tells the framing page the code. */
  function expectRefusal(res: TestResponse, status: number, code: string): void {
    expect(res.status).toBe(status);
    const csp = res.headers['content-security-policy'];
    expect(csp).toContain('frame-ancestors *');
    expect(csp).toContain(`script-src ${REFUSAL_SCRIPT_HASH}`);
    expect(res.headers['x-frame-options']).toBeUndefined();
    expect(res.headers['cache-control']).toBe('no-store');
    const html = res.body.toString();
    expect(html).toContain(`data-code="${code}"`);
    expect(html).toContain(`<script>${REFUSAL_SCRIPT}</script>`);
    expect(html).not.toMatch(/<input|<form|console\.log\("fields"\)/);
  }

  it('answers 503 with a refusal page saying fields_unavailable when the key store fails', async () => {
    lookup = async () => {
      throw new Error('redis down');
    };
    expectRefusal(await running.request('GET', `/fields/v1/card?key=${KEY}&origin=${SHOP}`), 503, 'fields_unavailable');
  });

  it('answers an unknown key, and a secret key put in a URL (never looked up), with api_key_invalid', async () => {
    lookup = jest.fn(async () => undefined);
    expectRefusal(await running.request('GET', `/fields/v1/card?key=${KEY}`), 404, 'api_key_invalid');
    lookup = jest.fn(async () => ({ allowedOrigins: [SHOP] }));
    expectRefusal(await running.request('GET', `/fields/v1/card?key=tsk_test_${'a'.repeat(38)}`), 400, 'api_key_invalid');
    expect(lookup).not.toHaveBeenCalled();
  });

  it('answers a page origin the key does not allow with origin_not_allowed; an allowed one (or none claimed) gets the fields', async () => {
    lookup = async () => ({ allowedOrigins: [SHOP, 'https://*.shop.example'] });
    const page = (origin?: string) =>
      running.request('GET', `/fields/v1/card?key=${KEY}${origin === undefined ? '' : `&origin=${encodeURIComponent(origin)}`}`);
    expectRefusal(await page('https://evil.example'), 403, 'origin_not_allowed');
    expectRefusal(await page('http://shop.example'), 403, 'origin_not_allowed');
    for (const origin of [SHOP, 'https://pay.shop.example', undefined]) {
      const res = await page(origin);
      expect({ origin, status: res.status }).toEqual({ origin, status: 200 });
      // The claim only picks the page: framing is still allowed to the key's origins alone.
      expect(res.headers['content-security-policy']).toContain(`frame-ancestors ${SHOP} https://*.shop.example`);
    }
  });

  it('serves tessera.js to any page, without credentials, cacheable for a short while', async () => {
    const res = await running.request('GET', '/js/v1/tessera.js');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/javascript/);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(res.headers['cache-control']).toBe('public, max-age=300');
  });
});

describe('loadCardFieldsAssets', () => {
  it('refuses a fields script that would end its inline script element', () => {
    expect(() => loadCardFieldsAssets(assetsDir('var s = "</script>";'))).toThrow(/cannot be inlined/);
  });

  it('says to build when the scripts are missing', () => {
    expect(() => loadCardFieldsAssets(path.join(os.tmpdir(), 'no-such-dir'))).toThrow(/run npm run build/);
  });
});

describe('the hosted page under the card-testing limits', () => {
  const VISA = '4242424242424242';
  const MASTERCARD = '5555555555554444';
  const AMEX = '378282246310005';
  const NOT_LUHN = '4242424242424241';
  const CVV = '314';
  const LIMITS: BrowserLimitConfig = {
    BROWSER_TOKENS_PER_IP_PER_MINUTE: 6,
    BROWSER_TOKENS_PER_KEY_PER_MINUTE: 10,
    BROWSER_DISTINCT_CARDS_PER_IP_PER_HOUR: 2,
    BROWSER_CHALLENGE_BASE_NUMBER: 1_000,
    BROWSER_CHALLENGE_MAX_NUMBER: 100_000,
    BROWSER_CHALLENGE_TTL_SECONDS: 60,
    BROWSER_ATTACK_COOLDOWN_SECONDS: 300,
  };
  const TTL_UNDER_ATTACK = 240;
  const env = useFieldsRedis();
  let assets: CardFieldsAssets;
  let sessions: RedisFormSessionStore;
  let tokenized: TokenizeRequest[];

  beforeAll(() => {
    assets = loadCardFieldsAssets(assetsDir());
  });
  beforeEach(async () => {
    await env.redis.flushall();
    sessions = new RedisFormSessionStore(env.redis);
    tokenized = [];
  });

  /** The fields listener as main wires it, behind a load balancer at 127.0.0.1 unless told otherwise. */
  async function hostedPage(
    opts: { trustedProxies?: string[]; counter?: RateLimitCounter; cards?: DistinctCardCounter } = {},
  ): Promise<{ app: RunningApp; logs: () => string }> {
    const { logger, text } = captureLogger();
    const formSessions: HostedPageDeps = {
      sessions,
      vault: {
        tokenize: async (request: TokenizeRequest) => {
          tokenized.push(request);
          return aTokenRecord({ last4: request.number.slice(-4), provisional: true });
        },
      },
      pepper: TEST_PEPPER,
      fieldsOrigin: 'https://fields.example',
      now: () => new Date(),
    };
    const cardTesting = new BrowserTokenLimiter({
      counter: opts.counter ?? new RedisRateLimitCounter(env.redis),
      cards: opts.cards ?? new RedisDistinctCardCounter(env.redis),
      config: LIMITS,
      fingerprintKey: cardFingerprintKey(TEST_PEPPER),
      challengeKey: 'challenge-hmac-key-challenge-hmac-key',
      logger,
    });
    const app = await startApp(
      createFieldsApp({
        assets,
        lookupKey: async () => undefined,
        logger,
        formSessions,
        cardTesting,
        provisionalTtlUnderAttackSeconds: TTL_UNDER_ATTACK,
        trustedProxies: parseCidrList(opts.trustedProxies ?? ['127.0.0.1/32']),
      }),
    );
    // The clock, the durations and the random request ids each line carries are blanked: a 3-digit CVV
    // may turn up in them by chance (".314Z"), and they hold nothing a request sent.
    const logs = (): string =>
      text()
        .replace(/"time":"[^"]*"/g, '"time":""')
        .replace(/"ms":[\d.]+/g, '"ms":0')
        .replace(/"requestId":"[^"]*"/g, '"requestId":""');
    return { app, logs };
  }

  async function openSession(keyId = 'key_shop'): Promise<FormSessionRecord> {
    const now = new Date();
    const record: FormSessionRecord = {
      id: newFormSessionId(),
      merchantId: 'shop',
      mode: 'test',
      keyId,
      returnUrl: 'https://shop.example/done',
      cancelUrl: null,
      csrfToken: newCsrfToken(),
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + 900_000).toISOString(),
      status: 'open',
      finishedAt: null,
      result: null,
    };
    await sessions.create(record);
    return record;
  }

  /** What the page's form posts, from the shopper at `ip` (named by the load balancer's X-Forwarded-For), with its script's proof of work if given. */
  function pay(app: RunningApp, session: FormSessionRecord, ip: string, number: string, challenge?: string): Promise<TestResponse> {
    const body = new URLSearchParams({
      csrf: session.csrfToken,
      cardnumber: number,
      'exp-date': `12 / ${String((new Date().getUTCFullYear() + 3) % 100)}`,
      cvc: number === AMEX ? '4314' : CVV,
      ccname: 'Ada Shopper',
      ...(challenge !== undefined ? { challenge } : {}),
    }).toString();
    return app.request('POST', `/pay/${session.id}`, {
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'sec-fetch-site': 'same-origin',
        'x-forwarded-for': ip,
      },
      body,
    });
  }

  /** What the page's script does on submit: asks for the session's challenge, and solves it. */
  async function solvedChallenge(
    app: RunningApp,
    session: FormSessionRecord,
    ip: string,
  ): Promise<{ solution: string; required: boolean }> {
    const res = await app.request('GET', `/pay/${session.id}/challenge`, {
      headers: { 'sec-fetch-site': 'same-origin', 'x-forwarded-for': ip },
    });
    expect(res.status).toBe(200);
    const challenge = JSON.parse(res.body.toString()) as ProofOfWorkChallenge;
    return { solution: solveProofOfWork(challenge).solution, required: challenge.required === true };
  }

  /** A refusal the shopper can read: an HTML page with the message as an alert, never JSON nor the card. */
  function expectLimitPage(res: TestResponse, message: RegExp, cards: string[], code = 'rate_limited'): void {
    expect(res.status).toBe(429);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['x-tessera-error']).toBe(code);
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const html = res.body.toString();
    expect(html).toMatch(/role="alert"/);
    expect(html).toMatch(message);
    expect(html).not.toMatch(/^\s*\{/);
    for (const card of [...cards, CVV]) expect(html).not.toContain(card);
  }

  it('refuses a third different card from one shopper across checkouts, with a page the shopper can read, and tokenizes nothing', async () => {
    const { app, logs } = await hostedPage();
    try {
      for (const number of [VISA, MASTERCARD]) expect((await pay(app, await openSession(), '203.0.113.7', number)).status).toBe(303);
      const res = await pay(app, await openSession(), '203.0.113.7', AMEX);
      expectLimitPage(res, /Too many card payments have been tried just now\. Please try again in about \d+ minutes\./, [AMEX]);
      // The form is still there: the wait passes, and the shopper may pay on the same page then.
      expect(res.body.toString()).toContain('id="card-form"');
      expect(tokenized.map((t) => t.number)).toEqual([VISA, MASTERCARD]);
      // The same card again is not card testing; another shopper is not held back.
      expect((await pay(app, await openSession(), '203.0.113.7', VISA)).status).toBe(303);
      expect((await pay(app, await openSession(), '198.51.100.9', AMEX)).status).toBe(303);
      for (const secret of [VISA, MASTERCARD, AMEX, CVV]) expect(logs()).not.toContain(secret);
    } finally {
      await app.close();
    }
  });

  it('counts the shopper by the socket address when the peer is not a trusted proxy, whatever X-Forwarded-For says', async () => {
    const { app } = await hostedPage({ trustedProxies: [] });
    try {
      expect((await pay(app, await openSession(), '203.0.113.1', VISA)).status).toBe(303);
      expect((await pay(app, await openSession(), '203.0.113.2', MASTERCARD)).status).toBe(303);
      expectLimitPage(await pay(app, await openSession(), '203.0.113.3', AMEX), /Too many card payments/, [AMEX]);
    } finally {
      await app.close();
    }
  });

  it('refuses a shopper past the per-IP rate; past the per-key threshold it asks every shopper for a proof of work and takes the card with one', async () => {
    const { app } = await hostedPage();
    try {
      for (let i = 0; i < LIMITS.BROWSER_TOKENS_PER_IP_PER_MINUTE; i++) {
        expect((await pay(app, await openSession('key_ip'), '192.0.2.50', VISA)).status).toBe(303);
      }
      expectLimitPage(await pay(app, await openSession('key_ip_2'), '192.0.2.50', VISA), /Too many card payments/, [VISA]);

      for (let i = 0; i < LIMITS.BROWSER_TOKENS_PER_KEY_PER_MINUTE; i++) {
        expect((await pay(app, await openSession('key_busy'), `198.51.100.${i + 1}`, VISA)).status).toBe(303);
      }
      expect(tokenized.every((t) => t.provisionalTtlSeconds === undefined)).toBe(true);
      const session = await openSession('key_busy');
      const asked = await pay(app, session, '198.51.100.200', VISA);
      expectLimitPage(asked, /Please submit your card again/, [VISA], 'challenge_required');
      expect(asked.body.toString()).toContain('id="card-form"');
      const work = await solvedChallenge(app, session, '198.51.100.200');
      expect(work.required).toBe(true);
      expect((await pay(app, session, '198.51.100.200', VISA, work.solution)).status).toBe(303);
      // Made under attack: a short life unless the merchant's server retains it.
      expect(tokenized.at(-1)?.provisionalTtlSeconds).toBe(TTL_UNDER_ATTACK);
      expect((await pay(app, await openSession('key_other'), '198.51.100.200', VISA)).status).toBe(303);
    } finally {
      await app.close();
    }
  });

  it(`takes no more cards on a session once ${FAILED_SUBMISSIONS_PER_FORM_SESSION} were refused, even a good one, and says to go back to the shop`, async () => {
    const { app, logs } = await hostedPage();
    try {
      const session = await openSession();
      for (let i = 1; i < FAILED_SUBMISSIONS_PER_FORM_SESSION; i++) {
        const res = await pay(app, session, `203.0.113.${i}`, NOT_LUHN);
        expect(res.status).toBe(400);
        expect(res.body.toString()).toContain('id="card-form"');
      }
      const last = await pay(app, session, '203.0.113.100', NOT_LUHN);
      expectLimitPage(
        last,
        /Too many cards were refused on this payment page, so it takes no more\. Go back to the shop and start again\./,
        [NOT_LUHN],
      );
      expect(last.body.toString()).not.toContain('id="card-form"');
      const good = await pay(app, session, '203.0.113.101', VISA);
      expectLimitPage(good, /Go back to the shop and start again/, [VISA]);
      const reload = await app.request('GET', `/pay/${session.id}`);
      expectLimitPage(reload, /Go back to the shop and start again/, []);
      expect(reload.body.toString()).not.toContain('id="card-form"');
      expect(tokenized).toEqual([]);
      expect((await pay(app, await openSession(), '203.0.113.101', VISA)).status).toBe(303);
      for (const secret of [NOT_LUHN, VISA, CVV]) expect(logs()).not.toContain(secret);
    } finally {
      await app.close();
    }
  });

  it('lets cards through when the limiter store cannot answer, and logs that it fails open without the card', async () => {
    const broken = (): Promise<never> => Promise.reject(new Error('connection lost'));
    const { app, logs } = await hostedPage({
      counter: { hit: broken, peek: broken, unhit: broken },
      cards: { admit: broken },
    });
    try {
      for (const number of [VISA, MASTERCARD, AMEX]) expect((await pay(app, await openSession(), '203.0.113.7', number)).status).toBe(303);
      expect(logs()).toMatch(/failing open/);
      for (const secret of [VISA, MASTERCARD, AMEX, CVV]) expect(logs()).not.toContain(secret);
    } finally {
      await app.close();
    }
  });
});

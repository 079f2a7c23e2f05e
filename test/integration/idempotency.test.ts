import crypto from 'node:crypto';
import { Redis } from 'ioredis';
import { aCard, apiClient, startRedis, TEST_CARDS, useSharedStack } from './harness';

jest.setTimeout(60_000);

const env = useSharedStack({ psp: true });
const acmeId = env.merchant('acme');
const globexId = env.merchant('globex');
const hoarderId = env.merchant('hoarder');
const modestId = env.merchant('modest');
const separateId = env.merchant('separate');

let acme: ReturnType<typeof apiClient>;

beforeAll(async () => {
  acme = apiClient(env.stack, env.stack.createKey(acmeId).apiKey);
});

beforeEach(() => env.psp.reset());

const withKey = (key: string) => ({ 'idempotency-key': key });

describe('Idempotency-Key on POST /v1/token', () => {
  it('replays the first answer for the same key and body, marked as replayed', async () => {
    const first = await acme('POST', '/v1/token', aCard(), withKey('tok-1'));
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const second = await acme('POST', '/v1/token', aCard(), withKey('tok-1'));
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body).toEqual(first.body);
    // A new delivery: its own request id.
    expect(second.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
  });

  it('answers 409 idempotency_key_reused for the same key with a different body', async () => {
    expect((await acme('POST', '/v1/token', aCard(), withKey('tok-2'))).status).toBe(201);
    const reused = await acme('POST', '/v1/token', aCard({ number: TEST_CARDS.mastercard }), withKey('tok-2'));
    expect(reused.status).toBe(409);
    expect(reused.body.error).toMatchObject({ code: 'idempotency_key_reused', param: 'Idempotency-Key' });
    expect(reused.headers.get('x-tessera-error')).toBe('idempotency_key_reused');
  });

  it('keeps keys per merchant: another merchant’s same key runs on its own', async () => {
    const other = apiClient(env.stack, env.stack.createKey(globexId).apiKey);
    const a = await acme('POST', '/v1/token', aCard(), withKey('shared-key'));
    const b = await other('POST', '/v1/token', aCard(), withKey('shared-key'));
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(b.body.token).not.toBe(a.body.token);
  });

  it('refuses a malformed key with 400', async () => {
    const res = await acme('POST', '/v1/token', aCard(), withKey('k'.repeat(256)));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'parameter_invalid', param: 'Idempotency-Key' });
  });
});

describe('Idempotency-Key on POST /v1/proxy', () => {
  it('sends concurrent duplicates to the PSP exactly once; the others get 409 in progress, later retries the replay', async () => {
    const { token } = (await acme('POST', '/v1/token', aCard({ cvv: undefined }))).body;
    env.psp.reply = (_req, res) => {
      setTimeout(() => {
        res.writeHead(201, { 'content-type': 'application/json', 'x-psp-charge': 'ch_1' });
        res.end('{"id":"ch_1","status":"succeeded"}');
      }, 400);
    };
    const body = { method: 'post', token, pspUrl: `${env.psp.url}/charges`, pspBody: '{"amount":1000,"card":"[CARD_NUMBER]"}' };
    const answers = await Promise.all(Array.from({ length: 5 }, () => acme('POST', '/v1/proxy', body, withKey('order-42'))));
    expect(env.psp.requests).toHaveLength(1);
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409]);
    for (const busy of answers.filter((a) => a.status === 409)) {
      expect(busy.body.error.code).toBe('idempotency_in_progress');
      expect(busy.headers.get('retry-after')).toBe('1');
    }

    const retry = await acme('POST', '/v1/proxy', body, withKey('order-42'));
    expect(retry.status).toBe(201);
    expect(retry.text).toBe('{"id":"ch_1","status":"succeeded"}');
    expect(retry.headers.get('x-psp-charge')).toBe('ch_1');
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    // Another gateway replica on the same Redis replays it too.
    const replica = await env.stack.startGatewayReplica();
    const viaReplica = await fetch(`${replica.baseUrl}/v1/proxy`, {
      method: 'POST',
      headers: { 'x-api-key': env.stack.createKey(acmeId).apiKey, 'content-type': 'application/json', 'idempotency-key': 'order-42' },
      body: JSON.stringify(body),
    });
    expect(viaReplica.status).toBe(201);
    expect(viaReplica.headers.get('idempotent-replayed')).toBe('true');
    await replica.process.stop();
    expect(env.psp.requests).toHaveLength(1);
  });

  it('replays the PSP’s answer without sending again, and keeps it in Redis only sealed, for 24 h', async () => {
    const { token } = (await acme('POST', '/v1/token', aCard({ cvv: undefined }))).body;
    // A PSP that echoes the card number: the stored answer must not hold it in clear.
    env.psp.reply = (req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(req.body);
    };
    const body = { method: 'post', token, pspUrl: `${env.psp.url}/echo`, pspBody: 'card=[CARD_NUMBER]' };
    const first = await acme('POST', '/v1/proxy', body, withKey('echo-1'));
    expect(first.text).toBe(`card=${TEST_CARDS.visa}`);
    expect((await acme('POST', '/v1/proxy', body, withKey('echo-1'))).text).toBe(`card=${TEST_CARDS.visa}`);
    expect(env.psp.requests).toHaveLength(1);

    const inspector = new Redis(env.redis.url);
    try {
      const keys = await inspector.keys('tessera:idempotency:*');
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) {
        const raw = (await inspector.get(key)) ?? '';
        expect(raw).not.toContain(TEST_CARDS.visa);
        expect(raw).not.toContain('order-42');
        const ttl = await inspector.pttl(key);
        expect(ttl).toBeGreaterThan(86_000_000);
        expect(ttl).toBeLessThanOrEqual(86_400_000);
      }
    } finally {
      inspector.disconnect();
    }
  });
});

/** The Redis keys holding a merchant's records for this Idempotency-Key (the store hashes the key). */
async function recordKeysFor(redis: Redis, idempotencyKey: string): Promise<string[]> {
  const digest = crypto.createHash('sha256').update(idempotencyKey).digest('base64url');
  return redis.keys(`tessera:idempotency:*${digest}`);
}

describe('Idempotency-Key storage limits', () => {
  it('passes a PSP answer larger than IDEMPOTENCY_MAX_STORED_BYTES through unchanged, keeps a bounded record, and refuses its replay without calling the PSP again', async () => {
    const { token } = (await acme('POST', '/v1/token', aCard({ cvv: undefined }))).body;
    // 1 MB: far above the 64 KiB default, well below the 10 MiB PSP response limit.
    const big = crypto.randomBytes(500_000).toString('hex');
    env.psp.reply = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'x-psp-charge': 'ch_big' });
      res.end(big);
    };
    const body = { method: 'post', token, pspUrl: `${env.psp.url}/big`, pspBody: 'card=[CARD_NUMBER]' };
    const first = await acme('POST', '/v1/proxy', body, withKey('big-1'));
    expect(first.status).toBe(200);
    expect(first.text).toBe(big);
    expect(first.headers.get('x-psp-charge')).toBe('ch_big');

    const inspector = new Redis(env.redis.url);
    try {
      const keys = await recordKeysFor(inspector, 'big-1');
      expect(keys).toHaveLength(1);
      expect(await inspector.strlen(keys[0]!)).toBeLessThan(1024);
      expect(await inspector.memory('USAGE', keys[0]!)).toBeLessThan(4096);
    } finally {
      inspector.disconnect();
    }

    const replay = await acme('POST', '/v1/proxy', body, withKey('big-1'));
    expect(replay.status).toBe(409);
    expect(replay.headers.get('x-tessera-error')).toBe('idempotent_replay_unavailable');
    expect(replay.body.error).toMatchObject({ code: 'idempotent_replay_unavailable', param: 'Idempotency-Key' });
    // The caller learns what the first answer was, and that nothing was sent again.
    expect(replay.body.error.message).toContain('200');
    expect(env.psp.requests).toHaveLength(1);
  });

  it('answers 429 idempotency_quota_exceeded to new keys of a merchant over IDEMPOTENCY_MAX_BYTES_PER_MERCHANT; replays, calls without a key, its other mode and other merchants go on', async () => {
    const replica = await env.stack.startGatewayReplica({ IDEMPOTENCY_MAX_BYTES_PER_MERCHANT: '4096' });
    try {
      const viaReplica = (apiKey: string) => apiClient({ baseUrl: replica.baseUrl } as typeof env.stack, apiKey);
      const hoarder = viaReplica(env.stack.createKey(hoarderId).apiKey);
      const answers = [];
      for (let i = 0; i < 30; i++) {
        const res = await hoarder('POST', '/v1/token', aCard(), withKey(`quota-${i}`));
        answers.push(res);
        if (res.status !== 201) break;
      }
      const refused = answers[answers.length - 1]!;
      expect(answers.length).toBeGreaterThan(1);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('x-tessera-error')).toBe('idempotency_quota_exceeded');
      expect(refused.body.error).toMatchObject({ code: 'idempotency_quota_exceeded', type: 'rate_limit_error', param: 'Idempotency-Key' });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);

      // A key already answered still replays: the quota only refuses new records.
      const replay = await hoarder('POST', '/v1/token', aCard(), withKey('quota-0'));
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect((await hoarder('POST', '/v1/token', aCard())).status).toBe(201);
      // The quota is per merchant and mode: the same merchant's live key and other merchants are not held back.
      const live = viaReplica(env.stack.createKey(hoarderId, 'live').apiKey);
      expect((await live('POST', '/v1/token', aCard({ number: '4111111111111111' }), withKey('quota-live'))).status).toBe(201);
      const other = viaReplica(env.stack.createKey(modestId).apiKey);
      expect((await other('POST', '/v1/token', aCard(), withKey('quota-0'))).status).toBe(201);
    } finally {
      await replica.process.stop();
    }
  });
});

describe('IDEMPOTENCY_REDIS_URL', () => {
  it('keeps idempotency records and their counters in a Redis of their own, none in the card store’s', async () => {
    const own = await startRedis();
    const replica = await env.stack.startGatewayReplica({ IDEMPOTENCY_REDIS_URL: own.url });
    const ownClient = new Redis(own.url);
    const shared = new Redis(env.redis.url);
    try {
      const call = apiClient({ baseUrl: replica.baseUrl } as typeof env.stack, env.stack.createKey(separateId).apiKey);
      expect((await call('POST', '/v1/token', aCard(), withKey('own-redis-1'))).status).toBe(201);
      const replay = await call('POST', '/v1/token', aCard(), withKey('own-redis-1'));
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(await recordKeysFor(ownClient, 'own-redis-1')).toHaveLength(1);
      expect(await ownClient.keys(`tessera:idempotency-usage:{m:${separateId}}:test:*`)).toHaveLength(1);
      expect(await recordKeysFor(shared, 'own-redis-1')).toEqual([]);
      expect(await shared.keys(`tessera:idempotency-usage:{m:${separateId}}:*`)).toEqual([]);
    } finally {
      ownClient.disconnect();
      shared.disconnect();
      await replica.process.stop();
      await own.stop();
    }
  });
});

describe('Idempotency-Key scope: merchant and mode', () => {
  it('does not replay a test key’s answer to a live key of the same merchant with the same Idempotency-Key and body', async () => {
    const live = apiClient(env.stack, env.stack.createKey(acmeId, 'live').apiKey);
    const tokenized = await acme('POST', '/v1/token', aCard(), withKey('mode-1'));
    expect(tokenized.status).toBe(201);
    // A live key refuses test cards: replaying the test answer would hand it a test token.
    const liveTokenize = await live('POST', '/v1/token', aCard(), withKey('mode-1'));
    expect(liveTokenize.headers.get('idempotent-replayed')).toBeNull();
    expect(liveTokenize.status).toBe(400);
    expect(liveTokenize.body.error.code).toBe('test_card_in_live_mode');

    const body = { method: 'post', token: tokenized.body.token, pspUrl: `${env.psp.url}/charges`, pspBody: 'card=[CARD_NUMBER]' };
    expect((await acme('POST', '/v1/proxy', body, withKey('mode-2'))).status).toBe(200);
    const liveCharge = await live('POST', '/v1/proxy', body, withKey('mode-2'));
    expect(liveCharge.headers.get('idempotent-replayed')).toBeNull();
    expect(liveCharge.headers.get('x-tessera-error')).not.toBeNull();
    expect([400, 404]).toContain(liveCharge.status);
    expect(env.psp.requests).toHaveLength(1);
  });
});

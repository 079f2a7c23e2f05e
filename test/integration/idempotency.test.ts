import { Redis } from 'ioredis';
import { aCard, apiClient, TEST_CARDS, useStack } from './harness';

jest.setTimeout(60_000);

const env = useStack({ psp: true });

let acme: ReturnType<typeof apiClient>;

beforeAll(async () => {
  acme = apiClient(env.stack, env.stack.createKey('acme').apiKey);
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
    const other = apiClient(env.stack, env.stack.createKey('globex').apiKey);
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
      headers: { 'x-api-key': env.stack.createKey('acme').apiKey, 'content-type': 'application/json', 'idempotency-key': 'order-42' },
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

import { createLogger } from '@tessera/common';
import { RequestLogRecorder } from '../app/requestLog';
import { buildDetokenizationRecord, buildRequestLogRecord, RedisDetokenizationLog, RedisRequestLogStore } from '@tessera/merchant-data';
import { aRequest } from '../testing/fixtures';
import { useGatewayRedis } from '../testing/redis';

const logger = createLogger('test', 'silent');
const merchants = () => Promise.resolve(['acme', 'globex']);
const env = useGatewayRedis();

const auditOf = (requestId: string, merchantId = 'acme') =>
  buildDetokenizationRecord({
    requestId,
    merchantId,
    keyId: 'key_1',
    token: 'tok.AAAABBBBCCCCDDDDEEEEFF',
    pspUrl: 'https://psp.example/v1/charges',
    method: 'POST',
    status: 200,
    code: null,
    now: new Date(),
  });

it('sends a proxy call’s audit entry and its request log entry to Redis in one socket write', async () => {
  const audit = new RedisDetokenizationLog(env.redis, 100, merchants);
  const store = new RedisRequestLogStore(env.redis, { maxEntries: 100, maxAgeMs: 60_000 });
  const recorder = new RequestLogRecorder(store, logger, { maxBuffered: 100 });
  // The script is on the server after this, so the call below is one EVALSHA.
  await audit.append(auditOf('req_warm'));

  const writes = jest.spyOn(env.redis.stream, 'write');
  // In the order of a /v1/proxy call: the audit when the PSP answered, the log once the answer went out.
  const appended = audit.append(auditOf('req_1'));
  recorder.record(aRequest({ requestId: 'req_1' }));
  await appended;
  await recorder.flush();
  expect(writes).toHaveBeenCalledTimes(1);
  writes.mockRestore();

  expect((await audit.list({ merchantId: 'acme', limit: 1 })).map((e) => e.requestId)).toEqual(['req_1']);
  expect((await store.range('acme', { count: 10 })).map((e) => e.requestId)).toEqual(['req_1']);
});

it('still reports an audit entry that could not be written', async () => {
  const client = env.redis.duplicate();
  // disconnect(), not quit(): quit() on a client that never connected dials first and leaves its connect timer running.
  client.disconnect();
  const audit = new RedisDetokenizationLog(client, 100, merchants);
  await expect(audit.append(auditOf('req_lost'))).rejects.toMatchObject({ code: 'service_unavailable' });
});

it('reports an audit entry that Redis refused, while the request log entry beside it is written', async () => {
  const audit = new RedisDetokenizationLog(env.redis, 100, merchants);
  const store = new RedisRequestLogStore(env.redis, { maxEntries: 100, maxAgeMs: 60_000 });
  await env.redis.set('tessera:detokenizations:{m:acme}', 'not a stream');
  try {
    const now = new Date();
    const [appended, logged] = await Promise.allSettled([
      audit.append(auditOf('req_refused')),
      store.append([{ merchantId: 'refused', record: buildRequestLogRecord(aRequest({ requestId: 'req_refused' })) }], now),
    ]);
    expect(appended).toMatchObject({ status: 'rejected', reason: { code: 'service_unavailable' } });
    expect(logged).toEqual({ status: 'fulfilled', value: 0 });
    expect((await store.range('refused', { count: 10 })).map((e) => e.requestId)).toEqual(['req_refused']);
  } finally {
    await env.redis.del('tessera:detokenizations:{m:acme}');
  }
});

it('lists every merchant’s entries newest first, each merchant’s kept in its own slot', async () => {
  const audit = new RedisDetokenizationLog(env.redis, 100, merchants);
  for (const [requestId, merchantId] of [
    ['req_a1', 'acme'],
    ['req_g1', 'globex'],
    ['req_a2', 'acme'],
    ['req_g2', 'globex'],
  ] as const) {
    await audit.append(auditOf(requestId, merchantId));
    await new Promise((r) => setTimeout(r, 2));
  }
  expect((await audit.list({ limit: 3 })).map((e) => e.requestId)).toEqual(['req_g2', 'req_a2', 'req_g1']);
  expect((await audit.list({ merchantId: 'globex', limit: 10 })).map((e) => e.requestId)).toEqual(['req_g2', 'req_g1']);
  expect(await env.redis.xlen('tessera:detokenizations:{m:globex}')).toBe(2);
});

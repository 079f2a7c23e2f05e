/**
 * Upgrading a Redis Cluster deployment from the layout where every gateway key sat behind the
 * `{tessera-gateway}` hash tag: the gateway of this version, started on such data, finds the API
 * keys and merchant settings in the merchants' slots, and replays an Idempotency-Key answer
 * stored before the upgrade instead of running the request again (CHANGELOG, upgrade note).
 */
import { Cluster } from 'ioredis';
import { issueApiKey } from '@tessera/merchant-data';
import {
  idempotencyKeys,
  idempotencyScope,
  requestFingerprint,
  sealResponse,
  storableIdempotencyKey,
} from '../../services/gateway/src/domain/idempotency';
import { aCard, apiClient, startRedisCluster, startStack, type RedisCluster, type Stack } from './harness';

jest.setTimeout(120_000);

let cluster: RedisCluster;
let stack: Stack;

beforeAll(async () => {
  cluster = await startRedisCluster();
  stack = await startStack(cluster, { env: { REDIS_CLUSTER_NODES: cluster.nodes.join(',') } });
});

afterAll(async () => {
  await stack?.stop();
  await cluster?.stop();
});

it('keeps the API keys, settings and stored Idempotency-Key answers of the old single-slot layout', async () => {
  await stack.gateway.stop();
  const client = new Cluster(cluster.nodes.map((node) => ({ host: node.split(':')[0]!, port: Number(node.split(':')[1]) })));
  const old = (key: string) => `{tessera-gateway}:${key}`;
  const pepper = stack.env.API_KEY_PEPPER as string;
  const { apiKey, record } = issueApiKey({ merchantId: 'oldshop', mode: 'test', allowedCidrs: [], pepper, now: new Date() });
  // An answer of POST /v1/token stored by the old gateway, sealed as it seals them.
  const body = aCard();
  const keys = idempotencyKeys(pepper);
  const scope = idempotencyScope('oldshop', 'test', storableIdempotencyKey(keys.fingerprint, 'before-upgrade'));
  const answer = { token: 'tok.answered-before-the-upgrade', last4: '4242' };
  const sealed = sealResponse(keys.seal, scope, {
    status: 201,
    headers: [['content-type', 'application/json; charset=utf-8']],
    body: Buffer.from(JSON.stringify(answer)),
  });
  const stored = { state: 'done', fingerprint: requestFingerprint(keys.fingerprint, 'POST /v1/token', body), sealed };
  try {
    await client.set(old(`tessera:apikey:${record.id}`), JSON.stringify(record));
    await client.set(old(`tessera:apikey-digest:${record.digest}`), record.id);
    await client.sadd(old('tessera:apikeys'), record.id);
    await client.set(old('tessera:merchant-settings:oldshop'), JSON.stringify({ pspHosts: ['api.psp.example'], updatedAt: 'x' }));
    await client.set(old(`tessera:idempotency:${scope}`), JSON.stringify(stored), 'PX', 3_600_000);
    // The gateway of this version started before on an empty Redis: its marker says there was nothing to copy.
    await client.del('tessera:layout');

    stack.gateway = stack.startService('gateway');
    await stack.listening(stack.gateway, stack.ports.gateway);
    await stack.ready();

    const call = apiClient(stack, apiKey);
    expect((await call('GET', '/v1/token/tok.unknown')).status).toBe(404);
    const replay = await call('POST', '/v1/token', body, { 'idempotency-key': 'before-upgrade' });
    expect({ status: replay.status, replayed: replay.headers.get('idempotent-replayed'), body: replay.body }).toEqual({
      status: 201,
      replayed: 'true',
      body: answer,
    });
    expect(JSON.parse((await client.get('tessera:merchant-settings:{m:oldshop}')) ?? 'null')).toMatchObject({
      pspHosts: ['api.psp.example'],
    });
    expect(JSON.parse((await client.get('tessera:layout')) ?? 'null')).toMatchObject({ version: 2, legacyData: true });
  } finally {
    client.disconnect();
  }
});

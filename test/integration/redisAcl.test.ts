/**
 * A compromised gateway must not read cards from Redis (docs/SECURITY.md, threat model). Redis
 * runs here exactly as the recipes run it: deploy/redis/start.sh with the shipped
 * deploy/redis/users.acl, with test passwords; then every service logs in as its own user.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { issueApiKey, RedisApiKeyStore, RedisFormSessionStore } from '@tessera/merchant-data';
import { RedisDistinctCardCounter, RedisRateLimitCounter } from '@tessera/edge';
import { INBOUND_INDEX_KEY, parseRouteDocument, RedisRouteStore } from '@tessera/routes';
import { cardImportKey } from '@tessera/merchant-data';
import { RedisCardImportRequests } from '../../services/admin/src/store/cardImportRequests';
import { RedisImportCreationStore } from '../../services/vault/src/store/importCreationStore';
import { RedisImportStore } from '../../services/vault/src/store/importStore';
import {
  aCard,
  apiClient,
  type RedisServer,
  restartRedis,
  ROOT,
  type Stack,
  startRedis,
  startStack,
  TEST_CVV,
  useStack,
  waitFor,
} from './harness';

jest.setTimeout(90_000);

const connect = async (url: string, tlsCaFile?: string): Promise<Redis> => {
  const client = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    ...(tlsCaFile ? { tls: { ca: fs.readFileSync(tlsCaFile) } } : {}),
  });
  client.on('error', () => undefined);
  await client.connect();
  return client;
};

const refusal = (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    (value) => `allowed: ${JSON.stringify(value)}`,
    (err: Error) => err.message.split(' ')[0] ?? err.message,
  );

describe('the shipped Redis ACL (deploy/redis/users.acl, started by deploy/redis/start.sh)', () => {
  let redis: RedisServer;
  let vault: Redis;
  let gateway: Redis;
  let admin: Redis;
  let fields: Redis;
  let inbound: Redis;
  const card = 'tessera:card:{tok_acl_test}';
  const cvv = 'tessera:cvv:{tok_acl_test}';

  beforeAll(async () => {
    // As deploy/k8s and docker-compose.yml run it: Redis knows only the passwords' digests.
    redis = await startRedis({ acl: true, digestsOnly: true });
    vault = await connect(redis.users!.vault);
    gateway = await connect(redis.users!.gateway);
    admin = await connect(redis.users!.admin);
    fields = await connect(redis.users!.fields);
    inbound = await connect(redis.users!.inbound);
    await vault.set(card, '{"sealed":"card"}');
    await vault.set(cvv, '{"sealed":"cvv"}');
    await gateway.set('tessera:apikey:key_1', '{"id":"key_1"}');
  });
  afterAll(async () => {
    for (const client of [vault, gateway, admin, fields, inbound]) client?.disconnect();
    await redis?.stop();
  });

  it('lets no connection without credentials run anything (the default user is off)', async () => {
    const anonymous = new Redis(`redis://127.0.0.1:${redis.port}`, {
      lazyConnect: true,
      enableReadyCheck: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    anonymous.on('error', () => undefined);
    await anonymous.connect();
    expect(await refusal(anonymous.get(card))).toBe('NOAUTH');
    expect(await refusal(anonymous.auth('default', ''))).toMatch(/WRONGPASS/);
    anonymous.disconnect();
  });

  it('refuses the gateway user every read, write and listing of card and CVV records', async () => {
    expect(await refusal(gateway.get(card))).toBe('NOPERM');
    expect(await refusal(gateway.get(cvv))).toBe('NOPERM');
    expect(await refusal(gateway.getdel(cvv))).toBe('NOPERM');
    expect(await refusal(gateway.set(cvv, 'replayed'))).toBe('NOPERM');
    expect(await refusal(gateway.dump(card))).toBe('NOPERM');
    expect(await refusal(gateway.scan('0', 'MATCH', 'tessera:card:*'))).toBe('NOPERM');
    expect(await refusal(gateway.scan('0'))).toBe('NOPERM');
    expect(await refusal(gateway.keys('tessera:card:*'))).toBe('NOPERM');
    expect(await refusal(gateway.keys('*'))).toBe('NOPERM');
    expect(await refusal(gateway.randomkey())).toBe('NOPERM');
    expect(await refusal(gateway.call('OBJECT', 'ENCODING', card))).toBe('NOPERM');
    // A script runs with its caller's rights, whatever keys it declares.
    expect(await refusal(gateway.eval("return redis.call('GET', KEYS[1])", 1, card))).toMatch(/NOPERM|ERR/);
    expect(await refusal(gateway.eval("return redis.call('GET', ARGV[1])", 0, cvv))).toMatch(/NOPERM|ERR/);
    expect(await refusal(gateway.call('CONFIG', 'GET', '*'))).toBe('NOPERM');
    expect(await refusal(gateway.call('CONFIG', 'SET', 'appendfsync', 'no'))).toBe('NOPERM');
    expect(await refusal(gateway.flushall())).toBe('NOPERM');
    expect(await refusal(gateway.call('ACL', 'SETUSER', 'tessera-gateway', '~*'))).toBe('NOPERM');
    expect(await refusal(gateway.call('MONITOR'))).toBe('NOPERM');
    // The records are untouched.
    expect(await vault.get(cvv)).toBe('{"sealed":"cvv"}');
  });

  it('lets the gateway user use its own keys, with scripts and transactions', async () => {
    expect(await gateway.get('tessera:apikey:key_1')).toBe('{"id":"key_1"}');
    expect(await gateway.eval("return redis.call('INCR', KEYS[1])", 1, 'tessera:ratelimit:k:1')).toBe(1);
    // Read again after a restart of Redis in a later test: it must outlive the tests between.
    expect(await gateway.multi().set('tessera:idempotency:m:k', '{}', 'PX', 600_000).lpush('tessera:audit', 'x').exec()).toEqual([
      [null, 'OK'],
      [null, 1],
    ]);
    expect(await gateway.xadd('tessera:detokenizations', '*', 'token', 'tok_1')).toMatch(/^\d+-\d+$/);
    // The layout of merchant slots: a merchant's keys behind its {m:<id>} tag, the key index and layout version.
    expect(await gateway.set('tessera:apikey:{m:acme}:key_1', '{}')).toBe('OK');
    expect(await gateway.hset('tessera:apikey-index', 'key_1', 'acme')).toBe(1);
    expect(await gateway.set('tessera:layout', '{"version":2}')).toBe('OK');
    expect(await gateway.xadd('tessera:detokenizations:{m:acme}', '*', 'entry', '{}')).toMatch(/^\d+-\d+$/);
    expect(await gateway.lpush('{tessera-gateway}:tessera:audit', 'x')).toBe(1);
  });

  it.each([
    ['admin', () => admin],
    ['fields', () => fields],
    ['inbound', () => inbound],
  ])('refuses the %s user every read, write and listing of card and CVV records', async (name, user) => {
    const client = user();
    expect(await refusal(client.get(card))).toBe('NOPERM');
    expect(await refusal(client.get(cvv))).toBe('NOPERM');
    expect(await refusal(client.getdel(cvv))).toBe('NOPERM');
    expect(await refusal(client.set(cvv, 'replayed'))).toBe('NOPERM');
    expect(await refusal(client.del(card))).toBe('NOPERM');
    expect(await refusal(client.dump(card))).toBe('NOPERM');
    expect(await refusal(client.call('OBJECT', 'ENCODING', card))).toBe('NOPERM');
    expect(await refusal(client.scan('0', 'MATCH', 'tessera:card:*'))).toBe('NOPERM');
    expect(await refusal(client.keys('tessera:card:*'))).toBe('NOPERM');
    expect(await refusal(client.randomkey())).toBe('NOPERM');
    expect(await refusal(client.eval("return redis.call('GET', KEYS[1])", 1, card))).toMatch(/NOPERM|ERR/);
    expect(await refusal(client.eval("return redis.call('GET', ARGV[1])", 0, cvv))).toMatch(/NOPERM|ERR/);
    expect(await refusal(client.call('CONFIG', 'GET', '*'))).toBe('NOPERM');
    expect(await refusal(client.flushall())).toBe('NOPERM');
    expect(await refusal(client.call('ACL', 'SETUSER', `tessera-${name}`, '~*'))).toBe('NOPERM');
    expect(await refusal(client.call('MONITOR'))).toBe('NOPERM');
    // Idempotency records hold the answers of /v1 calls (the gateway's alone), in both layouts.
    for (const key of [
      'tessera:idempotency:{m:acme}:k',
      'tessera:idempotency-usage:{m:acme}:live:1',
      '{tessera-gateway}:tessera:idempotency:k',
    ]) {
      expect({ key, read: await refusal(client.get(key)) }).toEqual({ key, read: 'NOPERM' });
      expect({ key, write: await refusal(client.set(key, '{}')) }).toEqual({ key, write: 'NOPERM' });
    }
    // Neither claims a CVC grant: the vault does.
    expect(await refusal(client.hgetall('tessera:cvc-session:abc'))).toBe('NOPERM');
    expect(await vault.get(card)).toBe('{"sealed":"card"}');
    expect(await vault.get(cvv)).toBe('{"sealed":"cvv"}');
  });

  it('lets the admin user keep keys, operators, sessions, settings and the audit, and only read the request log and the detokenization audit', async () => {
    expect(await admin.set('tessera:apikey:{m:acme}:key_2', '{"id":"key_2"}')).toBe('OK');
    expect(await admin.hset('tessera:apikey-index', 'key_2', 'acme')).toBe(1);
    expect(await admin.get('tessera:apikey:key_1')).toBe('{"id":"key_1"}');
    expect(await admin.set('tessera:merchant-settings:{m:acme}', '{}')).toBe('OK');
    expect(await admin.eval("return redis.call('INCR', KEYS[1])", 1, 'tessera:ratelimit:ip:1')).toBe(1);
    // Operators, their sessions and throttles and the admin audit, in the admin slot, written together.
    expect(
      await admin
        .multi()
        .set('{tessera-gateway}:tessera:operator:op_1', '{}')
        .set('{tessera-gateway}:tessera:operator-email:ops@acme.test', 'op_1')
        .sadd('{tessera-gateway}:tessera:operators', 'op_1')
        .set('{tessera-gateway}:tessera:admin-session:s', '{}', 'PX', 60_000)
        .incr('{tessera-gateway}:tessera:admin-login:fail:1')
        .lpush('{tessera-gateway}:tessera:audit', 'x')
        .lpush('{tessera-gateway}:tessera:audit:merchant:acme', 'x')
        .exec(),
    ).toEqual([
      [null, 'OK'],
      [null, 'OK'],
      [null, 1],
      [null, 'OK'],
      [null, 1],
      [null, expect.any(Number)],
      [null, 1],
    ]);
    expect(await admin.get('tessera:layout')).toBe('{"version":2}');
    // What merchants' calls did: the gateway writes it, the admin service shows it.
    await gateway.xadd('tessera:request-log:{m:globex}', '*', 'entry', '{}');
    await gateway.xadd('tessera:detokenizations:{m:globex}', '*', 'entry', '{}');
    await gateway.hincrby('tessera:request-stats:{m:globex}:1', 'count', 1);
    expect(await admin.xlen('tessera:request-log:{m:globex}')).toBe(1);
    expect(await admin.xrevrange('tessera:detokenizations:{m:globex}', '+', '-')).toHaveLength(1);
    expect(await admin.hgetall('tessera:request-stats:{m:globex}:1')).toEqual({ count: '1' });
    expect(await refusal(admin.xadd('tessera:request-log:{m:globex}', '*', 'entry', 'forged'))).toBe('NOPERM');
    expect(await refusal(admin.xadd('tessera:detokenizations:{m:globex}', '*', 'entry', 'forged'))).toBe('NOPERM');
    expect(await refusal(admin.del('tessera:detokenizations:{m:globex}'))).toBe('NOPERM');
    expect(await refusal(admin.hincrby('tessera:request-stats:{m:globex}:1', 'count', 1))).toBe('NOPERM');
    // Nothing of the shoppers' side: hosted-page form sessions are the gateway's and the fields'.
    expect(await refusal(admin.hgetall('tessera:form-session:fs_1'))).toBe('NOPERM');
    for (const command of [admin.scan('0'), admin.dbsize()]) expect(await refusal(command)).toBe('NOPERM');
  });

  it("lets the admin user ask for a card import, upload its file and read its report, and never read or write the import's sealed key or checkpoint rows", async () => {
    const requests = new RedisCardImportRequests(admin);
    const asked = await requests.request({
      merchantId: 'acme',
      mode: 'live',
      format: 'jsonl',
      keyType: 'curve25519',
      reportRecipientKey: '-----BEGIN PGP PUBLIC KEY BLOCK-----\nx\n-----END PGP PUBLIC KEY BLOCK-----',
      requestedBy: 'ops@tessera.test',
      now: new Date(),
    });
    expect(asked.state).toBe('creating');
    // The vault answers the request with the key pair, as its creation worker does.
    const creations = new RedisImportCreationStore(vault);
    expect(await creations.pending()).toContain(asked.id);
    await creations.complete(asked.id, {
      publicKey: 'armored public key',
      fingerprint: 'f1',
      sealedPrivateKey: '{"sealed":"private key"}',
    });
    expect(await requests.get(asked.id)).toMatchObject({ state: 'awaiting_upload', publicKey: 'armored public key' });
    // The upload, in the CLI's layout, and its queueing.
    await requests.clearUpload(asked.id);
    await requests.appendUpload(asked.id, Buffer.from('ciphertext'));
    await requests.queue(asked.id);
    const imports = new RedisImportStore(vault);
    expect(await imports.queued()).toContain(asked.id);
    expect((await imports.uploadChunk(asked.id, 0))?.toString()).toBe('ciphertext');
    expect(await imports.get(asked.id)).toMatchObject({ state: 'queued', sealedPrivateKey: '{"sealed":"private key"}', uploadChunks: 1 });
    // The report: the vault writes it, the admin user reads it and may not change it.
    await imports.appendReport(asked.id, Buffer.from('report ciphertext'));
    expect((await requests.reportChunk(asked.id, 0))?.toString()).toBe('report ciphertext');
    expect(await refusal(admin.rpush(cardImportKey(asked.id, 'report'), 'forged'))).toBe('NOPERM');
    // Never the sealed private key, the sealed checkpoint rows or the lease: not even their existence.
    await imports.checkpoint(asked.id, '{"sealed":"rows"}', { processed: 1, imported: 1, duplicates: 0, failed: 0 });
    for (const part of ['key', 'outcomes', 'lease'] as const) {
      const key = cardImportKey(asked.id, part);
      expect({ part, read: await refusal(admin.get(key)) }).toEqual({ part, read: 'NOPERM' });
      expect({ part, exists: await refusal(admin.exists(key)) }).toEqual({ part, exists: 'NOPERM' });
      expect({ part, write: await refusal(admin.set(key, 'forged')) }).toEqual({ part, write: 'NOPERM' });
      expect({ part, del: await refusal(admin.del(key)) }).toEqual({ part, del: 'NOPERM' });
    }
    expect(await refusal(admin.lrange(cardImportKey(asked.id, 'outcomes'), 0, -1))).toBe('NOPERM');
    // Nor through a script naming the key.
    expect(await refusal(admin.eval("return redis.call('GET', KEYS[1])", 1, cardImportKey(asked.id, 'key')))).toBe('NOPERM');
    expect(await vault.get(cardImportKey(asked.id, 'key'))).toBe('{"sealed":"private key"}');
  });

  it("lets the fields user look up a publishable key the admin user made, through the stores' own scripts, and make none", async () => {
    const { record } = issueApiKey({
      merchantId: 'acme',
      mode: 'test',
      kind: 'publishable',
      allowedCidrs: [],
      allowedOrigins: ['https://shop.acme.test'],
      pepper: 'p'.repeat(32),
      now: new Date(),
    });
    expect(await new RedisApiKeyStore(admin).create(record)).toBe(true);
    const fieldsKeys = new RedisApiKeyStore(fields);
    expect(await fieldsKeys.findByDigest(record.digest)).toMatchObject({ id: record.id, merchantId: 'acme', kind: 'publishable' });
    await fieldsKeys.touchLastUse({ merchantId: 'acme', id: record.id }, new Date(), '203.0.113.7');
    expect(await fieldsKeys.findByDigest(record.digest)).toMatchObject({ lastUsedIp: '203.0.113.7' });
    // No new key: the digest and id indexes, which name the record a presented key opens, are read-only.
    const made = issueApiKey({ merchantId: 'acme', mode: 'live', allowedCidrs: [], pepper: 'p'.repeat(32), now: new Date() }).record;
    await expect(fieldsKeys.create(made)).rejects.toThrow();
    expect(await admin.exists(`tessera:apikey-digest:{${made.digest}}`, 'tessera:apikey:{m:acme}:' + made.id)).toBe(0);
    expect(await refusal(fields.set(`tessera:apikey-digest:{${made.digest}}`, '{"merchantId":"acme","id":"key_x"}'))).toBe('NOPERM');
    expect(await refusal(fields.hset('tessera:apikey-index', made.id, 'acme'))).toBe('NOPERM');
  });

  it('lets the fields user read and finish the form sessions the gateway opens, through the store', async () => {
    const now = new Date();
    await new RedisFormSessionStore(gateway).create({
      id: 'fs_acl',
      merchantId: 'acme',
      mode: 'test',
      keyId: 'key_1',
      returnUrl: 'https://shop.acme.test/done',
      cancelUrl: null,
      csrfToken: 'csrf',
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + 60_000).toISOString(),
      status: 'open',
      finishedAt: null,
      result: null,
    });
    const sessions = new RedisFormSessionStore(fields);
    expect(await sessions.get('fs_acl')).toMatchObject({ merchantId: 'acme', status: 'open' });
    expect(await sessions.finish('fs_acl', 'canceled', null, now)).toBe('finished');
    expect(await new RedisFormSessionStore(gateway).get('fs_acl')).toMatchObject({ status: 'canceled' });
  });

  it('lets the inbound user read the routes the admin user applied and count its own limits, and write nothing else', async () => {
    const route = parseRouteDocument({
      id: 'checkout',
      kind: 'inbound',
      mode: 'test',
      inbound: { path: '/acl-checkout', upstream: 'https://shop.example/checkout' },
      filters: [{ location: 'text', pattern: 'card_number', store: 'number' }],
    });
    await new RedisRouteStore(admin).put('acme', route, new Date());
    const reader = new RedisRouteStore(inbound);
    expect(await reader.ownerOf('path:/acl-checkout')).toEqual({ merchantId: 'acme', routeId: 'checkout' });
    expect((await reader.get('acme', 'checkout'))?.route.id).toBe('checkout');
    expect(await inbound.hgetall(INBOUND_INDEX_KEY)).toHaveProperty(['path:/acl-checkout']);
    // Its counters, through the stores' own scripts.
    expect((await new RedisRateLimitCounter(inbound).hit('inbound:ip:203.0.113.9', 60_000)).count).toBe(1);
    expect((await new RedisDistinctCardCounter(inbound).admit('inbound:cards:203.0.113.9', 'fp', 8, 60_000)).admitted).toBe(true);
    // No route of its own making, no index entry, nobody else's counters, keys or sessions.
    await expect(new RedisRouteStore(inbound).put('acme', { ...route, id: 'evil' }, new Date())).rejects.toThrow();
    for (const write of [
      inbound.hset(INBOUND_INDEX_KEY, 'path:/evil', '{}'),
      inbound.hset('tessera:routes:{m:acme}:routes', 'evil', '{}'),
      inbound.set('tessera:ratelimit:browser:ip:1', '1'),
      inbound.set('tessera:ratelimit:key:{m:acme}:key_1', '0'),
    ]) {
      expect(await refusal(write)).toBe('NOPERM');
    }
    for (const key of [
      'tessera:apikey:key_1',
      'tessera:merchant-settings:{m:acme}',
      'tessera:form-session:fs_1',
      'tessera:ratelimit:browser:ip:1',
    ]) {
      expect({ key, read: await refusal(inbound.get(key)) }).toEqual({ key, read: 'NOPERM' });
    }
    for (const command of [inbound.scan('0'), inbound.dbsize(), inbound.keys('*')]) expect(await refusal(command)).toBe('NOPERM');
  });

  it('lets the fields user read merchant settings, count its limits and keep form sessions, and nothing more', async () => {
    await admin.set('tessera:merchant-settings:{m:acme}', '{"returnUrls":[]}');
    await gateway.hset('tessera:form-session:fs_1', 'record', '{}', 'status', 'open');
    expect(await fields.get('tessera:apikey:key_1')).toBe('{"id":"key_1"}');
    expect(await fields.hexists('tessera:apikey-index', 'key_none')).toBe(0);
    expect(await fields.get('tessera:apikey-digest:{d}')).toBeNull();
    expect(await fields.set('tessera:apikey-lastuse:{m:acme}:key_1', '1')).toBe('OK');
    // A request to move a key to the newest pepper, which the admin service takes and applies.
    const moveRequest = await fields.xadd('tessera:apikey-moves', 'MAXLEN', '~', 10_000, '*', 'keyId', 'key_1');
    expect(await admin.xrange('tessera:apikey-moves', '-', '+')).toEqual([[moveRequest, ['keyId', 'key_1']]]);
    expect(await admin.xdel('tessera:apikey-moves', moveRequest!)).toBe(1);
    expect(await fields.get('tessera:merchant-settings:{m:acme}')).toBe('{"returnUrls":[]}');
    expect(await fields.get('tessera:layout')).toBe('{"version":2}');
    expect(await fields.eval("return redis.call('INCR', KEYS[1])", 1, 'tessera:ratelimit:browser:ip:1')).toBe(1);
    expect(await fields.eval("return redis.call('SADD', KEYS[1], ARGV[1])", 1, 'tessera:ratelimit:cards:ip:1', 'fp')).toBe(1);
    expect(
      await fields.multi().hset('tessera:form-session:fs_1', 'status', 'completed').hget('tessera:form-session:fs_1', 'status').exec(),
    ).toEqual([
      [null, 0],
      [null, 'completed'],
    ]);
    // The key indexes, merchant settings (return URLs) and the layout: read, never written.
    for (const write of [
      fields.set('tessera:apikey-digest:{d}', 'key_9'),
      fields.del('tessera:apikey-digest:{d}'),
      fields.hset('tessera:apikey-index', 'key_9', 'acme'),
      fields.set('tessera:merchant-settings:{m:acme}', '{"returnUrls":["https://evil.example"]}'),
      fields.set('tessera:layout', '{}'),
      fields.eval("return redis.call('SET', KEYS[1], ARGV[1])", 1, 'tessera:merchant-settings:{m:acme}', 'x'),
    ])
      expect(await refusal(write)).toMatch(/^(NOPERM|ERR)/);
    expect(await admin.get('tessera:merchant-settings:{m:acme}')).toBe('{"returnUrls":[]}');
    // The admin slot holds the operators and their sessions: no read, no write (a write is a login).
    for (const key of [
      '{tessera-gateway}:tessera:operator:op_1',
      '{tessera-gateway}:tessera:admin-session:s',
      '{tessera-gateway}:tessera:audit',
    ]) {
      expect({ key, read: await refusal(fields.get(key)) }).toEqual({ key, read: 'NOPERM' });
    }
    expect(await refusal(fields.set('{tessera-gateway}:tessera:operator:op_2', '{}'))).toBe('NOPERM');
    // Nor the request log, the detokenization audit or the operators' records of the old layout.
    for (const key of ['tessera:request-log:{m:acme}', 'tessera:detokenizations:{m:acme}', 'tessera:operator:op_1', 'tessera:audit']) {
      expect({ key, read: await refusal(fields.type(key)) }).toEqual({ key, read: 'NOPERM' });
    }
    for (const command of [fields.scan('0'), fields.dbsize(), fields.keys('*')]) expect(await refusal(command)).toBe('NOPERM');
  });

  it('gives the vault user what the card store needs, and nothing of the gateway', async () => {
    expect(await vault.multi().set('tessera:card:{t2}', 'c', 'PX', 60_000).set('tessera:cvv:{t2}', 'v', 'PX', 60_000).exec()).toEqual([
      [null, 'OK'],
      [null, 'OK'],
    ]);
    expect(await vault.call('WAIT', '0', '0')).toBe(0);
    expect(await vault.getdel('tessera:cvv:{t2}')).toBe('v');
    expect(await vault.exists(cvv)).toBe(1);
    expect(await vault.call('CONFIG', 'GET', 'appendfsync')).toEqual(['appendfsync', 'always']);
    expect(await vault.info('persistence')).toMatch(/aof_enabled:1/);
    const [, keys] = await vault.scan('0', 'MATCH', 'tessera:card:*', 'COUNT', 1000);
    expect(keys.sort()).toEqual([card, 'tessera:card:{t2}'].sort());
    expect(await vault.eval("return redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL')", 1, 'tessera:card:{t2}', 'c2')).toBe('OK');
    await vault.set('tessera:checkpoint:rewrap', '0');
    expect(await refusal(vault.get('tessera:apikey:key_1'))).toBe('NOPERM');
    // Card imports: the uploaded ciphertext, checkpoints, the report and the queue are the vault's (the admin
    // user's share of them, never the key or checkpoints, is tested above).
    const imported = 'tessera:import:{imp_1}';
    expect(
      await vault
        .multi()
        .rpush(`${imported}:upload`, 'pgp')
        .hset(`${imported}:meta`, 'state', 'queued')
        .sadd('tessera:import:queue', 'imp_1')
        .exec(),
    ).toEqual([
      [null, 1],
      [null, 1],
      [null, 1],
    ]);
    expect(await vault.eval("if redis.call('GET', KEYS[1]) == ARGV[1] then return 1 end return 0", 1, `${imported}:lease`, 'h')).toBe(0);
    for (const [user, client] of [
      ['gateway', gateway],
      ['fields', fields],
    ] as const) {
      expect({ user, read: await refusal(client.lindex(`${imported}:upload`, 0)) }).toEqual({ user, read: 'NOPERM' });
      expect({ user, read: await refusal(client.smembers('tessera:import:queue')) }).toEqual({ user, read: 'NOPERM' });
    }
    expect(await refusal(vault.call('CONFIG', 'SET', 'appendfsync', 'no'))).toBe('NOPERM');
    expect(await refusal(vault.flushall())).toBe('NOPERM');
    expect(await refusal(vault.keys('*'))).toBe('NOPERM');
  });

  it('lets the admin service and the vault share the export orders, the vault write the export files and the admin service only read them', async () => {
    const order = 'tessera:export:{tessera-export}:order:exp_0123456789abcdef';
    await admin.set(order, '{"status":"approved"}');
    await admin.lpush('tessera:export:{tessera-export}:queue', 'exp_0123456789abcdef');
    await admin.hset('tessera:export:{tessera-export}:recipients:acl-shop', 'F00D', '{}');
    expect(await vault.get(order)).toBe('{"status":"approved"}');
    expect(await vault.hget('tessera:export:{tessera-export}:recipients:acl-shop', 'F00D')).toBe('{}');
    expect(await vault.set(order, '{"status":"done"}')).toBe('OK');
    const file = 'tessera:export-file:{exp_0123456789abcdef}';
    expect(await vault.multi().rpush(file, Buffer.from('pgp')).pexpire(file, 60_000).exec()).toEqual([
      [null, 1],
      [null, 1],
    ]);
    expect(await admin.lindex(file, 0)).toBe('pgp');
    expect(await admin.llen(file)).toBe(1);
    expect(await refusal(admin.rpush(file, 'forged'))).toBe('NOPERM');
    expect(await refusal(admin.del(file))).toBe('NOPERM');
    for (const other of [gateway, fields]) {
      expect(await refusal(other.get(order))).toBe('NOPERM');
      expect(await refusal(other.lindex(file, 0))).toBe('NOPERM');
    }
  });

  it('lets the vault keep the forward-proxy CAs and read, not write, the merchants’ routes; no other user touches a CA', async () => {
    const ca = 'tessera:ca:{m:acl-shop}';
    const routes = 'tessera:routes:{m:acl-shop}:routes';
    expect(await vault.eval("redis.call('SET', KEYS[1], ARGV[1], 'NX') return redis.call('GET', KEYS[1])", 1, ca, '{"v":1}')).toBe(
      '{"v":1}',
    );
    const [, found] = await vault.scan('0', 'MATCH', 'tessera:ca:*', 'COUNT', 1000);
    expect(found).toEqual([ca]);
    await admin.hset(routes, 'psp', '{"route":{}}');
    expect(await vault.hgetall(routes)).toEqual({ psp: '{"route":{}}' });
    expect(await vault.hget(routes, 'psp')).toBe('{"route":{}}');
    expect(await refusal(vault.hset(routes, 'psp', 'x'))).toBe('NOPERM');
    expect(await refusal(vault.del(routes))).toBe('NOPERM');
    for (const other of [gateway, admin, fields]) expect(await refusal(other.get(ca))).toBe('NOPERM');
  });

  // Redis replays its append-only file as the default user and re-checks permissions at each EXEC:
  // with a default user of no permissions, every transaction and script write was dropped here.
  it('keeps transaction and script writes across a restart of Redis (the AOF replays them all)', async () => {
    await vault.multi().set('tessera:card:{t3}', 'sealed-3').set('tessera:cvv:{t3}', 'cvv-3').exec();
    await gateway.eval("return redis.call('SET', KEYS[1], ARGV[1])", 1, 'tessera:apikey:key_3', '{"id":"key_3"}');
    await redis.process.stop();
    await restartRedis(redis);
    const [vaultAgain, gatewayAgain] = [await connect(redis.users!.vault), await connect(redis.users!.gateway)];
    try {
      expect(await vaultAgain.mget('tessera:card:{t3}', 'tessera:cvv:{t3}', card)).toEqual(['sealed-3', 'cvv-3', '{"sealed":"card"}']);
      expect(await gatewayAgain.mget('tessera:apikey:key_3', 'tessera:idempotency:m:k', 'tessera:apikey:key_1')).toEqual([
        '{"id":"key_3"}',
        '{}',
        '{"id":"key_1"}',
      ]);
    } finally {
      vaultAgain.disconnect();
      gatewayAgain.disconnect();
    }
  });
});

describe('deploy/redis/start.sh refuses to start', () => {
  let runDir: string;
  beforeAll(() => (runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-start-sh-'))));
  afterAll(() => fs.rmSync(runDir, { recursive: true, force: true }));
  const startSh = (env: Record<string, string>) =>
    spawnSync('sh', [path.join(ROOT, 'deploy', 'redis', 'start.sh'), '--port', '0'], {
      env: { PATH: process.env.PATH, TESSERA_REDIS_RUN_DIR: runDir, ...env },
      encoding: 'utf8',
      timeout: 10_000,
    });
  const password = 'p'.repeat(32);
  const digest = 'a'.repeat(64);

  it.each([
    [
      'neither for the admin user',
      { REDIS_VAULT_PASSWORD_SHA256: digest, REDIS_ADMIN_PASSWORD_SHA256: '' },
      /REDIS_ADMIN_PASSWORD must be set/,
    ],
    [
      'neither for the fields user',
      { REDIS_VAULT_PASSWORD_SHA256: digest, REDIS_FIELDS_PASSWORD_SHA256: '' },
      /REDIS_FIELDS_PASSWORD must be set/,
    ],
    [
      'neither for the inbound user',
      { REDIS_VAULT_PASSWORD_SHA256: digest, REDIS_INBOUND_PASSWORD_SHA256: '' },
      /REDIS_INBOUND_PASSWORD must be set/,
    ],
    ['a password and a digest for one user', { REDIS_VAULT_PASSWORD: password, REDIS_VAULT_PASSWORD_SHA256: digest }, /not both/],
    ['a digest that is not 64 hex digits', { REDIS_VAULT_PASSWORD_SHA256: 'z'.repeat(64) }, /64 hex digits/],
    ['a short digest', { REDIS_VAULT_PASSWORD_SHA256: digest.slice(1) }, /64 hex digits/],
    ['neither for one user', {}, /REDIS_VAULT_PASSWORD must be set/],
  ])('with %s, naming the variable and printing no secret', (_case, vaultEnv, message) => {
    const run = startSh({
      REDIS_GATEWAY_PASSWORD_SHA256: digest,
      REDIS_ADMIN_PASSWORD_SHA256: digest,
      REDIS_FIELDS_PASSWORD_SHA256: digest,
      REDIS_INBOUND_PASSWORD_SHA256: digest,
      ...vaultEnv,
    });
    expect(run.status).toBe(78);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).not.toContain(password);
    expect(run.stderr).not.toContain('zzzz');
  });
});

describe('the stack with per-service Redis users over TLS (rediss://)', () => {
  const env = useStack({ redis: { acl: true, tls: true }, psp: true, inbound: true });

  it('runs the inbound service as its own user: it reads the routes and is ready', async () => {
    const ready = await fetch(`${env.stack.inboundUrl}/readyz`);
    expect({ status: ready.status, body: await ready.json() }).toEqual({
      status: 200,
      body: { status: 'ready', checks: { redis: 'ok', vault: 'ok', proxy: 'ok' } },
    });
    const nowhere = await fetch(`${env.stack.inboundUrl}/checkout`, { method: 'POST' });
    expect(nowhere.headers.get('x-tessera-error')).toBe('route_not_found');
  });

  it('tokenizes and proxies end to end, each service logged in as its own user over TLS', async () => {
    // The keys CLI logs in as the admin user: API keys, operators and the admin audit list.
    const key = env.stack.createKey('acme', 'test');
    env.stack.createOperator('ops@acme.test', 'correct horse battery staple', 'acme');
    const call = apiClient(env.stack, key.apiKey);
    const created = await call('POST', '/v1/token', aCard());
    // The whole answer, so a refusal says which service was unavailable.
    expect({ status: created.status, body: created.body }).toMatchObject({ status: 201 });
    const token = created.body.token as string;
    const charge = {
      method: 'post',
      token,
      pspUrl: `${env.psp.url}/v1/charges`,
      pspHeaders: { 'Content-Type': 'application/json' },
      pspBody: '{"cvc":"[CARD_CVV]"}',
    };
    const res = await call('POST', '/v1/proxy', charge, { 'Idempotency-Key': 'acl-charge-1' });
    expect(res.status).toBe(200);
    expect(env.psp.requests).toHaveLength(1);
    expect(env.psp.requests[0]?.body.toString()).toBe(`{"cvc":"${TEST_CVV}"}`);
    // The replay comes from the gateway's idempotency record: its user can write and read it.
    const replay = await call('POST', '/v1/proxy', charge, { 'Idempotency-Key': 'acl-charge-1' });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(env.psp.requests).toHaveLength(1);
    expect((await call('GET', `/v1/token/${token}`)).status).toBe(200);

    // The vault's key-management CLI walks its cards with SCAN as the vault user.
    const vaultCli = (...args: string[]) =>
      spawnSync(process.execPath, [path.join(ROOT, 'services/vault/dist/cli/vault.js'), ...args], {
        cwd: ROOT,
        env: { ...env.stack.env, REDIS_URL: env.redis.users!.vault },
        encoding: 'utf8',
        timeout: 30_000,
      });
    const status = vaultCli('status', '--json');
    expect(status.stderr).toBe('');
    // The card's data key is under its merchant's key (issue 29), which the vault user reads too.
    const usage = JSON.parse(status.stdout) as { underMerchantKeys: { card: number }; merchantKeksByKeyId: Record<string, number> };
    expect(usage.underMerchantKeys.card).toBe(1);
    expect(Object.values(usage.merchantKeksByKeyId)).toEqual([1]);
    const rewrap = vaultCli('rewrap');
    expect(rewrap.status).toBe(0);
    expect(rewrap.stderr).toContain('scanned 1 tokens');
    expect(rewrap.stderr).toContain('failed 0 (complete)');

    // The card went to Redis through the vault's user; the gateway's cannot read it.
    const vault = await connect(env.redis.users!.vault, env.redis.tlsCaFile);
    const gateway = await connect(env.redis.users!.gateway, env.redis.tlsCaFile);
    expect(await vault.exists(`tessera:card:{${token}}`)).toBe(1);
    expect(await refusal(gateway.get(`tessera:card:{${token}}`))).toBe('NOPERM');
    for (const user of ['admin', 'fields'] as const) {
      const client = await connect(env.redis.users![user], env.redis.tlsCaFile);
      expect({ user, read: await refusal(client.get(`tessera:card:{${token}}`)) }).toEqual({ user, read: 'NOPERM' });
      client.disconnect();
    }
    // The request log is written as the gateway's user too (after each answer, so it may lag a little).
    for (let i = 0; i < 40 && (await gateway.xlen('tessera:request-log:{m:acme}')) < 4; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await gateway.xlen('tessera:request-log:{m:acme}')).toBeGreaterThanOrEqual(4);
    vault.disconnect();
    gateway.disconnect();
    expect((await call('DELETE', `/v1/token/${token}`)).status).toBe(204);
    // Events and webhook endpoints are written as the gateway's user (a refused event record would
    // only be logged, so the list shows that it was kept).
    const events = await call('GET', '/v1/events');
    expect({
      status: events.status,
      types: (events.body?.data as Array<{ type: string }> | undefined)?.map((e) => e.type).filter((type) => type.startsWith('token.')),
    }).toEqual({
      status: 200,
      types: ['token.deleted', 'token.created'],
    });
    const endpoint = await call('POST', '/v1/webhook-endpoints', { url: 'https://shop.acme.test/events', enabledEvents: ['*'] });
    expect({ status: endpoint.status, body: endpoint.body }).toMatchObject({ status: 201 });
    expect((await call('GET', '/v1/webhook-endpoints')).body?.data).toHaveLength(1);

    // The fields service, as its own user: the publishable key's lookup (a script), its card-testing
    // counters, then the vault; the key made by the admin service's CLI.
    const publishable = env.stack.createPublishableKey('acme', ['https://shop.acme.test']);
    const browser = await fetch(`${env.stack.fieldsUrl}/v1/browser/tokens`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': publishable.apiKey,
        origin: env.stack.fieldsUrl,
        'x-tessera-parent-origin': 'https://shop.acme.test',
      },
      body: JSON.stringify(aCard({ cvv: undefined, holderName: undefined })),
    });
    expect(browser.status).toBe(201);

    // The vault verified the AOF through CONFIG GET (VAULT_WRITE_ACK=aof), not the INFO fallback.
    expect(env.stack.vault.output).not.toContain('CONFIG is not available');
    // No password of any user in any service's output.
    for (const url of Object.values(env.redis.users!)) {
      expect(env.stack.logs()).not.toContain(new URL(url).password);
    }
  });

  it('refuses a plaintext connection to the TLS-only Redis', async () => {
    const plain = new Redis(env.redis.users!.vault.replace('rediss://', 'redis://'), {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      connectTimeout: 2000,
    });
    plain.on('error', () => undefined);
    await expect(plain.connect().then(() => plain.get('x'))).rejects.toThrow();
    plain.disconnect();
  });
});

describe('a pepper rotation with per-service Redis users', () => {
  let redis: RedisServer;
  const stacks: Stack[] = [];
  beforeAll(async () => {
    redis = await startRedis({ acl: true });
  });
  afterAll(async () => {
    for (const stack of stacks) await stack.stop();
    await redis?.stop();
  });

  // The fields user may not write the digest index: it asks, and the admin service moves the key.
  it('moves a publishable key used only on the fields service to the newest pepper', async () => {
    const [v1, v2] = [randomBytes(32).toString('hex'), randomBytes(32).toString('hex')];
    const peppers = (list: string) => ({ env: { API_KEY_PEPPER: '', API_KEY_PEPPERS: list } });
    const before = await startStack(redis, peppers(`v1:${v1}`));
    stacks.push(before);
    const publishable = before.createPublishableKey('acme', ['https://shop.acme.test']);
    await before.stop();

    const stack = await startStack(redis, peppers(`v1:${v1},v2:${v2}`));
    stacks.push(stack);
    const status = () =>
      JSON.parse(stack.cli(['rehash-status', '--json']).trim().split('\n').pop() ?? '') as {
        current: string;
        publishableByVersion: Record<string, number>;
      };
    expect(status()).toMatchObject({ current: 'v2', publishableByVersion: { v1: 1, v2: 0 } });
    const tokenize = () =>
      fetch(`${stack.fieldsUrl}/v1/browser/tokens`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': publishable.apiKey,
          origin: stack.fieldsUrl,
          'x-tessera-parent-origin': 'https://shop.acme.test',
        },
        body: JSON.stringify(aCard({ cvv: undefined, holderName: undefined })),
      });
    expect((await tokenize()).status).toBe(201);
    await waitFor(() => status().publishableByVersion.v2 === 1, 'the publishable key on pepper v2', 10_000);
    expect(status().publishableByVersion).toEqual({ v1: 0, v2: 1 });
    // Found under the newest pepper now, by the fields service as well.
    expect((await tokenize()).status).toBe(201);
    expect(stack.admin?.output).toContain('API key moved to the current pepper');
    expect(stack.fields?.output).not.toContain('could not move an API key');
    expect(stack.logs()).not.toContain('NOPERM');
  });
});

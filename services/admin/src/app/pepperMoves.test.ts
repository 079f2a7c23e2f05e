import { createRedisClient } from '@tessera/common/redis';
import {
  type ApiKeyRecord,
  hashApiKey,
  issueApiKey,
  type KeyMoveRequest,
  pepperIdOf,
  RedisApiKeyMoveRequests,
  RedisApiKeyStore,
} from '@tessera/merchant-data';
import { captureLogger } from '../../../../packages/edge/src/testing/logger';
import { useAdminRedis } from '../testing/redis';
import { applyPepperMove, startPepperMoves, type PepperMoveDeps } from './pepperMoves';

const OLD = 'old-pepper-old-pepper-old-pepper-0001';
const NEW = 'new-pepper-new-pepper-new-pepper-0002';

const db = useAdminRedis();
beforeEach(() => db.redis.flushall());

function setup() {
  const log = captureLogger();
  const keyStore = new RedisApiKeyStore(db.redis);
  const deps: PepperMoveDeps = { keyStore, pepper: NEW, logger: log.logger };
  /** A key made under the old pepper, and the request the fields service makes on its use. */
  const aKey = async (kind: 'secret' | 'publishable', pepper = OLD) => {
    const { apiKey, record } = issueApiKey({
      merchantId: 'acme',
      mode: 'test',
      kind,
      allowedCidrs: [],
      ...(kind === 'publishable' ? { allowedOrigins: ['https://shop.acme.test'] } : {}),
      pepper,
      now: new Date(),
    });
    expect(await keyStore.create(record)).toBe(true);
    const request: KeyMoveRequest = {
      keyId: record.id,
      foundDigest: record.digest,
      currentDigest: hashApiKey(NEW, apiKey),
      pepperId: pepperIdOf(NEW),
    };
    return { apiKey, record, request };
  };
  /** Where the presented key leads: the record under each digest. */
  const under = async (digest: string): Promise<ApiKeyRecord | undefined> => keyStore.findByDigest(digest);
  return { deps, keyStore, log, aKey, under };
}

describe('moving a key to the newest pepper at the fields service’s request', () => {
  it('moves a publishable key found under an older pepper, and applying the same request again changes nothing', async () => {
    const { deps, log, aKey, under } = setup();
    const { record, request } = await aKey('publishable');
    expect(await applyPepperMove(deps, request)).toBe('moved');
    expect(await under(request.currentDigest)).toMatchObject({ id: record.id, digest: request.currentDigest, pepperId: pepperIdOf(NEW) });
    expect(await under(request.foundDigest)).toBeUndefined();
    // A second fields replica asked too: found done, nothing written, nothing to warn about.
    const before = await db.redis.get(`tessera:apikey:{m:acme}:${record.id}`);
    expect(await applyPepperMove(deps, request)).toBe('already');
    expect(await db.redis.get(`tessera:apikey:{m:acme}:${record.id}`)).toBe(before);
    expect(await under(request.currentDigest)).toMatchObject({ id: record.id });
    expect(log.text()).toContain('API key moved to the current pepper');
    expect(log.text()).not.toContain('refused');
  });

  it('records the newest pepper on a publishable key made before records named it', async () => {
    const { deps, keyStore, aKey, under } = setup();
    const { record } = await aKey('publishable', NEW);
    const { pepperId: _, ...legacy } = record;
    await db.redis.set(`tessera:apikey:{m:acme}:${record.id}`, JSON.stringify(legacy));
    expect((await keyStore.get(record.id))?.pepperId).toBeUndefined();
    const request = { keyId: record.id, foundDigest: record.digest, currentDigest: record.digest, pepperId: pepperIdOf(NEW) };
    expect(await applyPepperMove(deps, request)).toBe('moved');
    expect(await under(record.digest)).toMatchObject({ id: record.id, pepperId: pepperIdOf(NEW) });
    expect(await applyPepperMove(deps, request)).toBe('already');
  });

  it('refuses to move a secret key, and logs its id only', async () => {
    const { deps, log, aKey, under } = setup();
    const { apiKey, record, request } = await aKey('secret');
    expect(await applyPepperMove(deps, request)).toBe('refused');
    expect(await under(request.foundDigest)).toMatchObject({ id: record.id, digest: request.foundDigest });
    expect(await under(request.currentDigest)).toBeUndefined();
    expect(await db.redis.exists(`tessera:apikey-digest:{${request.currentDigest}}`)).toBe(0);
    expect(log.text()).toContain('not a publishable key');
    expect(log.text()).toContain(record.id);
    for (const secret of [apiKey, request.foundDigest, request.currentDigest]) expect(log.text()).not.toContain(secret);
  });

  it('refuses a request whose found digest is no longer the key’s: a key someone else moved is not re-pointed', async () => {
    const { deps, log, aKey, under } = setup();
    const { record, request } = await aKey('publishable');
    expect(await applyPepperMove(deps, request)).toBe('moved');
    // A forged request naming the digest the key was found by, to a digest of another key.
    const elsewhere = hashApiKey(NEW, 'tpk_test_someone-elses-key');
    expect(await applyPepperMove(deps, { ...request, currentDigest: elsewhere })).toBe('refused');
    expect(await under(request.currentDigest)).toMatchObject({ id: record.id });
    expect(await under(elsewhere)).toBeUndefined();
    expect(log.text()).toContain('no longer under the digest it was found by');
  });

  it('refuses a pepper other than its own newest, an unknown key and a malformed request', async () => {
    const { deps, log, aKey, under } = setup();
    const { record, request } = await aKey('publishable');
    expect(await applyPepperMove(deps, { ...request, pepperId: pepperIdOf('some-other-pepper-some-other-pepper') })).toBe('refused');
    expect(await applyPepperMove(deps, { ...request, keyId: 'key_doesnotexist' })).toBe('refused');
    expect(await applyPepperMove(deps, { ...request, currentDigest: '' })).toBe('refused');
    expect(await applyPepperMove(deps, { ...request, keyId: 'tpk_test_notanid' })).toBe('refused');
    expect(await under(request.foundDigest)).toMatchObject({ id: record.id });
    expect(log.text()).not.toContain('tpk_test_notanid');
    expect(log.lines().filter((l) => l.includes('refused a request'))).toHaveLength(4);
  });
});

describe('the admin service’s loop over the requests (tessera:apikey-moves)', () => {
  it('applies what the fields service asked, each request once across replicas, and stops when closed', async () => {
    const { deps, log, aKey, under } = setup();
    const keys = await Promise.all([1, 2, 3, 4, 5, 6].map(() => aKey('publishable')));
    const fields = new RedisApiKeyMoveRequests(db.redis);
    for (const { request } of keys) await fields.request(request);
    expect(await db.redis.xlen('tessera:apikey-moves')).toBe(keys.length);
    // Two admin replicas, each on its own connection.
    const other = createRedisClient(db.server.url, { commandTimeoutMs: 1000, profile: 'server' });
    await other.connect();
    const refusals = captureLogger();
    const loops = [
      startPepperMoves({ ...deps, requests: fields, intervalMs: 10 }),
      startPepperMoves({
        ...deps,
        logger: refusals.logger,
        keyStore: new RedisApiKeyStore(other),
        requests: new RedisApiKeyMoveRequests(other),
        intervalMs: 10,
      }),
    ];
    try {
      // A request leaves the stream when a replica takes it, and is applied after.
      const moved = async () => (await Promise.all(keys.map(({ request }) => under(request.currentDigest)))).every(Boolean);
      for (let i = 0; i < 200 && !(await moved()); i++) await new Promise((r) => setTimeout(r, 10));
      for (const { record, request } of keys) {
        await expect(under(request.currentDigest)).resolves.toMatchObject({ id: record.id, pepperId: pepperIdOf(NEW) });
      }
      expect(await db.redis.xlen('tessera:apikey-moves')).toBe(0);
    } finally {
      for (const loop of loops) await loop.close();
      other.disconnect();
    }
    // Each request went to one replica: neither found one already moved by the other.
    for (const text of [log.text(), refusals.text()]) expect(text).not.toContain('refused');
    // Closed: a request made now stays for the next admin process.
    await fields.request(keys[0]!.request);
    await new Promise((r) => setTimeout(r, 50));
    expect(await db.redis.xlen('tessera:apikey-moves')).toBe(1);
    expect(log.text() + refusals.text()).toContain('API key moved to the current pepper');
  });

  it('gives each request to one caller only when several take at once', async () => {
    const fields = new RedisApiKeyMoveRequests(db.redis);
    for (let i = 0; i < 50; i++) {
      await fields.request({ keyId: `key_${i}`, foundDigest: 'a'.repeat(64), currentDigest: 'b'.repeat(64), pepperId: 'p' });
    }
    const other = createRedisClient(db.server.url, { commandTimeoutMs: 1000, profile: 'server' });
    await other.connect();
    try {
      const taken = await Promise.all([fields.take(100), new RedisApiKeyMoveRequests(other).take(100), fields.take(100)]);
      const ids = taken.flat().map((r) => r.keyId);
      expect(ids.sort()).toEqual([...Array(50).keys()].map((i) => `key_${i}`).sort());
    } finally {
      other.disconnect();
    }
  });
});

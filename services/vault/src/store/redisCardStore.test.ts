import { Redis } from 'ioredis';
import { createLogger, TesseraError } from '@tessera/common';
import { RedisCardStore } from './redisCardStore';
import { cardKey, cvvKey, fingerprintIndexKey } from './records';
import { generateToken } from '../domain/token';
import type { WriteAck } from '@tessera/common';
import { freePort, startRedisServer, useRedisServer, commandsSentDuring } from '@tessera/test-support';
import { aStoredCard, aStoredCvv, describeCardStoreContract } from '../test/storeContract';

jest.setTimeout(20_000);

const logger = createLogger('vault-test', 'silent');
/** A private redis-server and a plain client to inspect what the vault wrote. */
const db = useRedisServer((url) => new Redis(url));

async function openStore(url = db.server.url, commandTimeoutMs = 500, writeAck?: WriteAck): Promise<RedisCardStore> {
  const store = RedisCardStore.connect(url, { commandTimeoutMs, logger, writeAck });
  await store.waitUntilReady(3000);
  return store;
}

describe('RedisCardStore against a real redis-server', () => {
  // The contract suite opens synchronously; wait for readiness inside each operation instead.
  describeCardStoreContract(
    'RedisCardStore',
    () => {
      const store = RedisCardStore.connect(db.server.url, { commandTimeoutMs: 500, logger });
      return new Proxy(store, {
        get(target, prop, receiver) {
          const value = Reflect.get(target, prop, receiver) as unknown;
          if (typeof value !== 'function') return value;
          return async (...args: unknown[]) => {
            await target.waitUntilReady(3000);
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      });
    },
    generateToken,
  );

  it('stores card and CVV under hash-tagged keys with their own TTLs, and no card data in clear', async () => {
    const store = await openStore();
    const t = generateToken();
    await store.save({ token: t, card: aStoredCard(), cardTtlMs: 86_400_000, cvv: { record: aStoredCvv(), ttlMs: 3_600_000 } });
    expect(cardKey(t)).toBe(`tessera:card:{${t}}`);
    expect(cvvKey(t)).toBe(`tessera:cvv:{${t}}`);
    const cardTtl = await db.client.pttl(cardKey(t));
    const cvvTtl = await db.client.pttl(cvvKey(t));
    expect(cardTtl).toBeGreaterThan(86_000_000);
    expect(cardTtl).toBeLessThanOrEqual(86_400_000);
    expect(cvvTtl).toBeGreaterThan(3_500_000);
    expect(cvvTtl).toBeLessThanOrEqual(3_600_000);
    await store.close();
  });

  it('lets Redis expire the CVV while the card stays', async () => {
    const store = await openStore();
    const t = generateToken();
    await store.save({ token: t, card: aStoredCard(), cardTtlMs: 60_000, cvv: { record: aStoredCvv(), ttlMs: 150 } });
    expect(await store.hasCvv(t)).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(await store.hasCvv(t)).toBe(false);
    expect(await store.getCvv(t)).toBeNull();
    expect(await store.getCard(t)).toEqual(aStoredCard());
    await store.close();
  });

  it('turns an unreadable record into internal_error rather than crashing', async () => {
    const store = await openStore();
    const t = generateToken();
    await db.client.set(cardKey(t), '{not json', 'PX', 60_000);
    await expect(store.getCard(t)).rejects.toMatchObject({ code: 'internal_error' });
    await store.close();
  });

  it('fails fast with service_unavailable when Redis is down, and reports not ready', async () => {
    const port = await freePort();
    const store = RedisCardStore.connect(`redis://127.0.0.1:${port}`, { commandTimeoutMs: 500, logger });
    const started = Date.now();
    const err = await store.getCard(generateToken()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TesseraError);
    expect((err as TesseraError).code).toBe('service_unavailable');
    expect((err as TesseraError).status).toBe(503);
    await expect(store.save({ token: generateToken(), card: aStoredCard(), cardTtlMs: 1000 })).rejects.toMatchObject({
      code: 'service_unavailable',
    });
    expect(await store.ping()).toMatchObject({ ok: false });
    expect(Date.now() - started).toBeLessThan(2000);
    await store.close();
  });

  it('turns a Redis that goes away mid-life into service_unavailable', async () => {
    const own = await startRedisServer();
    const store = await openStore(own.url, 500);
    const t = generateToken();
    await store.save({ token: t, card: aStoredCard(), cardTtlMs: 60_000 });
    await own.stop();
    await expect(store.getCard(t)).rejects.toMatchObject({ code: 'service_unavailable' });
    await store.close();
  });
});

describe('RedisCardStore fingerprint index on save', () => {
  it('names the first retained card of a fingerprint, with SET NX in the write pipeline and no script', async () => {
    const store = await openStore();
    const [first, second, provisional] = [generateToken(), generateToken(), generateToken()];
    const sent = await commandsSentDuring(db.server.url, async () => {
      await store.save({ token: provisional, card: aStoredCard({ fingerprint: 'fp-a', provisional: true }), cardTtlMs: 60_000 });
      await store.save({ token: first, card: aStoredCard({ fingerprint: 'fp-a' }), cardTtlMs: 60_000 });
      await store.save({ token: second, card: aStoredCard({ fingerprint: 'fp-a' }), cardTtlMs: 90_000 });
    });
    // Provisional: not indexed; later cards of the same fingerprint leave the entry alone.
    expect(await store.findByFingerprint('fp-a')).toBe(first);
    const ttl = await db.client.pttl(fingerprintIndexKey('fp-a'));
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    expect(sent.filter((c) => c === 'eval' || c === 'evalsha')).toEqual([]);
    // Three card records and two index entries (none for the provisional card).
    expect(sent.filter((c) => c === 'set')).toHaveLength(5);

    // Released with its card: the next card made for it takes the entry.
    await store.delete(first);
    await store.releaseFingerprint('fp-a', first);
    const third = generateToken();
    await store.save({ token: third, card: aStoredCard({ fingerprint: 'fp-a' }), cardTtlMs: 60_000 });
    expect(await store.findByFingerprint('fp-a')).toBe(third);
    await store.close();
  });
});

describe('RedisCardStore scripts', () => {
  it('sends the text of each script once per connection and then only its SHA (EVALSHA)', async () => {
    const store = await openStore();
    const tokens = [generateToken(), generateToken()];
    for (const t of tokens)
      await store.save({ token: t, card: aStoredCard(), cardTtlMs: 60_000, cvv: { record: aStoredCvv(), ttlMs: 60_000 } });
    const sent = await commandsSentDuring(db.server.url, async () => {
      for (const t of tokens) {
        const raw = (await store.readRaw('card', t)) as Buffer;
        expect(await store.replaceRaw('card', t, raw, raw)).toBe(true);
        expect(await store.retainCard(t, raw, aStoredCard(), { cardTtlMs: 60_000, cvvTtlMs: 60_000 })).toBe(true);
        expect(await store.takeCvv(t, (record) => ({ id: record.nonce ?? record.sealed.iv, rememberMs: 60_000 }))).toMatchObject({
          outcome: 'taken',
        });
      }
    });
    // Three scripts: one EVAL each on this connection, EVALSHA for every later call.
    expect(sent.filter((c) => c === 'eval')).toHaveLength(3);
    expect(sent.filter((c) => c === 'evalsha')).toHaveLength(3);
    await store.close();
  });
});

describe('RedisCardStore under a stalled Redis', () => {
  it('fails every operation within its timeout, also one that queued behind a stalled one', async () => {
    const own = await startRedisServer(['--enable-debug-command', 'yes']);
    const sleeper = new Redis(own.url);
    try {
      const store = await openStore(own.url, 500);
      const stalled = sleeper.call('DEBUG', 'SLEEP', '2');
      await new Promise((r) => setTimeout(r, 50));
      const started = Date.now();
      const timed = (op: Promise<unknown>) =>
        op.then(
          () => ({ code: 'ok', ms: Date.now() - started }),
          (err: TesseraError) => ({ code: err.code, ms: Date.now() - started }),
        );
      const first = timed(store.getCard(generateToken()));
      // Issued once the first has been written: with auto-pipelining it waits for that one's answer.
      await new Promise((r) => setTimeout(r, 200));
      const queued = [
        timed(store.save({ token: generateToken(), card: aStoredCard(), cardTtlMs: 60_000 })),
        timed(store.getCard(generateToken())),
      ];
      const results = await Promise.all([first, ...queued]);
      expect(results.map((r) => r.code)).toEqual(['service_unavailable', 'service_unavailable', 'service_unavailable']);
      // Each within its own 500 ms (plus scheduling), counted from when it was issued.
      expect(results[0]!.ms).toBeLessThan(500 + 250);
      for (const r of results.slice(1)) expect(r.ms).toBeLessThan(200 + 500 + 250);
      await stalled;
      await store.close();
    } finally {
      sleeper.disconnect();
      await own.stop();
    }
  });
});

describe('RedisCardStore batch outcomes', () => {
  it('writes a batch on one Redis with one transaction per card and a single WAIT for all of them', async () => {
    const store = await openStore(db.server.url, 1000, { kind: 'replicas', replicas: 1, timeoutMs: 50 });
    const tokens = [generateToken(), generateToken(), generateToken()];
    let outcomes: Array<{ saved: boolean }> = [];
    const sent = await commandsSentDuring(db.server.url, async () => {
      outcomes = await store.saveMany(tokens.map((t) => ({ token: t, card: aStoredCard(), cardTtlMs: 60_000 })));
    });
    // No replica here: the one WAIT counts 0, so every card is refused and removed again.
    expect(outcomes.map((o) => o.saved)).toEqual([false, false, false]);
    expect(sent.filter((c) => c === 'wait')).toHaveLength(1);
    expect(sent.filter((c) => c === 'multi')).toHaveLength(3);
    expect(await db.client.exists(...tokens.map(cardKey))).toBe(0);
    await store.close();
  });

  it('reports each entry of a batch on its own: one refused write fails only its entry', async () => {
    const store = await openStore();
    const [a, bad, c] = [generateToken(), generateToken(), generateToken()];
    const outcomes = await store.saveMany([
      { token: a, card: aStoredCard(), cardTtlMs: 60_000, cvv: { record: aStoredCvv(), ttlMs: 60_000 } },
      // Redis refuses a zero expiry inside the transaction: this entry alone fails.
      { token: bad, card: aStoredCard(), cardTtlMs: 0 },
      { token: c, card: aStoredCard(), cardTtlMs: 60_000 },
    ]);
    expect(outcomes.map((o) => (o.saved ? 'saved' : o.error.code))).toEqual(['saved', 'service_unavailable', 'saved']);
    expect(await store.getCard(a)).toEqual(aStoredCard());
    expect(await store.getCard(c)).toEqual(aStoredCard());
    expect(await store.getCard(bad)).toBeNull();
    await store.close();
  });
});

describe('RedisCardStore write acknowledgement (VAULT_WRITE_ACK)', () => {
  const entry = (t: string) => ({ token: t, card: aStoredCard(), cardTtlMs: 60_000, cvv: { record: aStoredCvv(), ttlMs: 60_000 } });

  it('aof: refuses to store a card while Redis does not fsync every write', async () => {
    // The shared test server runs with appendonly no.
    const store = await openStore(db.server.url, 1000, { kind: 'aof' });
    const refused = generateToken();
    await expect(store.save(entry(refused))).rejects.toMatchObject({ code: 'service_unavailable' });
    expect(await db.client.exists(cardKey(refused))).toBe(0);
    await store.close();
  });

  it('aof: stores the card when Redis runs appendonly yes with appendfsync always', async () => {
    const own = await startRedisServer(['--appendonly', 'yes', '--appendfsync', 'always']);
    try {
      const store = await openStore(own.url, 1000, { kind: 'aof' });
      const t = generateToken();
      await store.save(entry(t));
      expect(await store.getCard(t)).toEqual(aStoredCard());
      await store.close();
    } finally {
      await own.stop();
    }
  });

  it('replica:1: answers service_unavailable and leaves no record when no replica acknowledges', async () => {
    const store = await openStore(db.server.url, 1000, { kind: 'replicas', replicas: 1, timeoutMs: 100 });
    const t = generateToken();
    await expect(store.save(entry(t))).rejects.toMatchObject({ code: 'service_unavailable', status: 503 });
    expect(await db.client.exists(cardKey(t), cvvKey(t))).toBe(0);
    await store.close();
  });

  it('replica:1: a fingerprint index claim no replica acknowledged fails with service_unavailable', async () => {
    const store = await openStore(db.server.url, 1000, { kind: 'replicas', replicas: 1, timeoutMs: 100 });
    const fingerprint = `fp-${generateToken()}`;
    await expect(store.claimFingerprint(fingerprint, generateToken(), null, 60_000)).rejects.toMatchObject({
      code: 'service_unavailable',
      status: 503,
    });
    await store.close();
  });

  it('replica:1: a batch of fingerprint index claims no replica acknowledged fails as a whole with service_unavailable', async () => {
    const store = await openStore(db.server.url, 1000, { kind: 'replicas', replicas: 1, timeoutMs: 100 });
    const claims = [1, 2].map(() => ({ fingerprint: `fp-${generateToken()}`, token: generateToken(), replacing: null, ttlMs: 60_000 }));
    await expect(store.claimFingerprints(claims)).rejects.toMatchObject({ code: 'service_unavailable', status: 503 });
    await store.close();
  });

  it('replica:1: stores the card once a real replica has acknowledged the write', async () => {
    // The replica's first sync starts at once instead of after Redis's 5 s wait for more replicas.
    const primary = await startRedisServer(['--repl-diskless-sync-delay', '0']);
    const replica = await startRedisServer(['--replicaof', '127.0.0.1', String(primary.port)]);
    const replicaClient = new Redis(replica.url);
    try {
      // The replica must have finished its first sync before WAIT can count it.
      for (let i = 0; i < 100 && !/master_link_status:up/.test(await replicaClient.info('replication')); i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const store = await openStore(primary.url, 1500, { kind: 'replicas', replicas: 1, timeoutMs: 1000 });
      const t = generateToken();
      await store.save(entry(t));
      // Acknowledged means the replica has it: read it there.
      expect(await replicaClient.exists(cardKey(t), cvvKey(t))).toBe(2);
      // A batch's claims are acknowledged together, by one WAIT.
      const claims = [1, 2, 3].map(() => ({
        fingerprint: `fp-${generateToken()}`,
        token: generateToken(),
        replacing: null,
        ttlMs: 60_000,
      }));
      let holders: string[] = [];
      const sent = await commandsSentDuring(primary.url, async () => {
        holders = await store.claimFingerprints(claims);
      });
      expect(holders).toEqual(claims.map((claim) => claim.token));
      expect(sent.filter((c) => c === 'wait')).toHaveLength(1);
      expect(await replicaClient.get(fingerprintIndexKey(claims[2]?.fingerprint ?? ''))).toBe(claims[2]?.token);
      await store.close();
    } finally {
      replicaClient.disconnect();
      await replica.stop();
      await primary.stop();
    }
  });
});

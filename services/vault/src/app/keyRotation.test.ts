import { Redis } from 'ioredis';
import { createLogger } from '@tessera/common';
import { run, type Io } from '../cli/vault';
import { describeCard } from '../domain/card';
import { parseKeyRing } from '../domain/keyRing';
import { countRecordsByKeyId, REWRAP_CHECKPOINT, rewrapAll } from './keyRotation';
import { cardKey } from '../store/records';
import { RedisCardStore } from '../store/redisCardStore';
import { aCard, aVault, keyRingEntry, keyRingOf } from '../test/builders';
import { sealFormat1 } from '../test/legacyEnvelope';
import { useRedisServer } from '@tessera/test-support';
import { generateToken } from '../domain/token';
import type { Vault } from './vault';

jest.setTimeout(30_000);

const logger = createLogger('vault-test', 'silent');
/** merchant_a's test key: aCard's default number is a published test card. */
const A = { merchantId: 'merchant_a', mode: 'test' };
/** A private redis-server and a plain client to inspect what the vault wrote. */
const db = useRedisServer((url) => new Redis(url));

beforeEach(async () => {
  // Each test owns the whole private redis-server (never the machine's Redis).
  await db.client.flushdb();
});

async function openStore(): Promise<RedisCardStore> {
  const store = RedisCardStore.connect(db.server.url, { commandTimeoutMs: 1000, logger });
  await store.waitUntilReady(3000);
  return store;
}

function vaultWith(store: RedisCardStore, ring: ReturnType<typeof keyRingOf>): Vault {
  return aVault({ store, keyRing: ring });
}

/** Writes a token exactly as the vault did before envelope encryption (format 1, `v: 1`, no mode). */
async function saveFormat1Token(store: RedisCardStore, ring: ReturnType<typeof keyRingOf>, number: string, cvv: string): Promise<string> {
  const card = aCard({ number, cvv });
  const token = generateToken();
  const ctx = { merchantId: card.merchantId, token, mode: null };
  const sealed = sealFormat1(ring, { ...ctx, kind: 'card' }, Buffer.from(JSON.stringify({ number, holderName: card.holderName })));
  const { mode: _mode, ...stored } = describeCard(card, 'test', sealed, new Date(Date.now() + 86_400_000), new Date());
  await store.save({
    token,
    card: stored,
    cardTtlMs: 86_400_000,
    cvv: { record: { sealed: sealFormat1(ring, { ...ctx, kind: 'cvv' }, Buffer.from(cvv)) }, ttlMs: 3_600_000 },
  });
  for (const key of [cardKey(token), `tessera:cvv:{${token}}`]) {
    const raw = (await db.client.get(key)) as string;
    await db.client.set(key, raw.replace('{"v":2,', '{"v":1,'), 'KEEPTTL');
    expect(await db.client.get(key)).toMatch(/^\{"v":1,/);
  }
  return token;
}

function captureIo(): Io & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l) };
}

describe('key rotation against a real redis-server', () => {
  const oldEntry = keyRingEntry('old');
  const newEntry = keyRingEntry('new');
  const before = keyRingOf(oldEntry);
  const rotated = keyRingOf(oldEntry, newEntry);
  const retired = keyRingOf(newEntry);

  it('keeps every record readable during and after a resumable rewrap, and leaves none on the retired key', async () => {
    const store = await openStore();
    const oldVault = vaultWith(store, before);
    const tokens: string[] = [];
    for (let i = 0; i < 6; i++) tokens.push((await oldVault.tokenize(aCard())).token);
    const fingerprintBefore = (await oldVault.getToken(A, tokens[0] as string)).fingerprint;
    const legacy = [
      await saveFormat1Token(store, before, '5555555555554444', '987'),
      await saveFormat1Token(store, before, '4242424242424242', '321'),
    ];
    tokens.push(...legacy);
    expect((await countRecordsByKeyId(store, 3)).byKeyId).toEqual({ old: { card: 8, cvv: 8, format1: 4 } });

    // Online: the vault already runs with the rotated ring while the tool works through the records.
    const liveVault = vaultWith(store, rotated);
    const partial = await rewrapAll(store, rotated, { batchSize: 2, maxBatches: 1 });
    expect(partial.done).toBe(false);
    expect(partial.fingerprintKey).toBe('rewrapped');
    expect(await store.getCheckpoint(REWRAP_CHECKPOINT)).not.toBeNull();
    for (const t of tokens) expect((await liveVault.render(A, t, '[CARD_NUMBER]', 'text/plain')).toString()).toMatch(/^\d{16}$/);
    const midway = (await liveVault.tokenize(aCard())).token;
    tokens.push(midway);

    const progress: string[] = [];
    const finished = await rewrapAll(store, rotated, { batchSize: 2, onProgress: (c) => progress.push(c.cursor) });
    expect(finished.done).toBe(true);
    expect(progress.length).toBeGreaterThan(0);
    // Resumed, so the counts carry on from the first run rather than starting again. SCAN only
    // promises keys that existed for the whole scan: the token added midway may or may not be
    // seen (it is written under the new key anyway), so 8 is the floor.
    expect(finished.checkpoint.stats.scanned).toBeGreaterThanOrEqual(8);
    expect(finished.checkpoint.stats.migrated).toBe(4);
    expect(finished.checkpoint.stats.failed).toBe(0);
    expect(await store.getCheckpoint(REWRAP_CHECKPOINT)).toBeNull();

    expect(finished.fingerprintKey).toBe('alreadyCurrent');
    expect(await countRecordsByKeyId(store, 3)).toEqual({
      byKeyId: { new: { card: 9, cvv: 9, format1: 0 } },
      // Without a merchant KEK store, rewrap moves records to the root ring's newest key only.
      underMerchantKeys: { card: 0, cvv: 0 },
      merchantKeksByKeyId: {},
      unreadable: 0,
      fingerprintKeyKekId: 'new',
    });
    // The old key can now leave VAULT_KEYS: a vault without it opens every card and CVV.
    const afterRetirement = vaultWith(store, retired);
    for (const t of tokens) {
      expect((await afterRetirement.render(A, t, '[CARD_NUMBER]/[CARD_CVV]', 'text/plain')).toString()).toMatch(/^\d{16}\/\d{3}$/);
    }
    expect((await afterRetirement.render(A, legacy[0] as string, '[CARD_NUMBER]', 'text/plain')).toString()).toBe('5555555555554444');
    // The fingerprint key moved with the records: the same card still gets the same fingerprint.
    expect((await afterRetirement.tokenize(aCard())).fingerprint).toBe(fingerprintBefore);
    await store.close();
  });

  it('counts a tampered record as failed, leaves it unchanged and re-wraps the rest', async () => {
    const store = await openStore();
    const oldVault = vaultWith(store, before);
    const good = (await oldVault.tokenize(aCard())).token;
    const bad = (await oldVault.tokenize(aCard())).token;
    const tampered = (await db.client.getBuffer(cardKey(bad))) as Buffer;
    // The last byte of a format-6 record is the card ciphertext's.
    tampered[tampered.length - 1] = (tampered[tampered.length - 1] as number) ^ 1;
    await db.client.set(cardKey(bad), tampered, 'KEEPTTL');

    const result = await rewrapAll(store, rotated, { batchSize: 10 });
    expect(result.checkpoint.stats).toMatchObject({ failed: 1, rewrapped: 3 });
    expect(await db.client.getBuffer(cardKey(bad))).toEqual(tampered);
    expect((await vaultWith(store, retired).getToken(A, good)).token).toBe(good);
    await store.close();
  });

  it('restarts from the beginning when the saved checkpoint was made for another target key', async () => {
    const store = await openStore();
    await vaultWith(store, before).tokenize(aCard());
    await store.setCheckpoint(REWRAP_CHECKPOINT, JSON.stringify({ targetKeyId: 'elsewhere', cursor: '12345', stats: {} }));
    const result = await rewrapAll(store, rotated, { batchSize: 10 });
    expect(result.checkpoint.stats).toMatchObject({ scanned: 1, rewrapped: 2 });
    await store.close();
  });
});

describe('npm run vault -- <command>', () => {
  const oldEntry = keyRingEntry('old');
  const newEntry = keyRingEntry('new');
  const env = (keys: string) => ({ NODE_ENV: 'test', REDIS_URL: db.server.url, VAULT_KEYS: keys });

  it('rotate prints exactly one new VAULT_KEYS entry on stdout and refuses a key id already in use', async () => {
    const io = captureIo();
    expect(await run(['rotate', '--kid', 'k2026'], env(oldEntry), io)).toBe(0);
    expect(io.stdout).toHaveLength(1);
    const entry = io.stdout[0] as string;
    expect(entry).toMatch(/^k2026:[A-Za-z0-9+/]{43}=$/);
    const ring = parseKeyRing(`${oldEntry},${entry}`);
    expect(ring.ok && ring.ring.currentKeyId).toBe('k2026');
    expect(io.stderr.join('\n')).not.toContain(entry.split(':')[1]);

    const dup = captureIo();
    expect(await run(['rotate', '--kid', 'old'], env(oldEntry), dup)).toBe(2);
    expect(dup.stdout).toEqual([]);
  });

  it('rotate without --kid names the key after the time', async () => {
    const io = captureIo();
    expect(await run(['rotate'], env(oldEntry), io)).toBe(0);
    expect(io.stdout[0]).toMatch(/^k\d{8}T\d{6}:/);
  });

  it('status and rewrap report counts with progress and never print key material', async () => {
    const store = await openStore();
    const v = vaultWith(store, keyRingOf(oldEntry));
    for (let i = 0; i < 5; i++) await v.tokenize(aCard());
    await store.close();

    const status = captureIo();
    expect(await run(['status', '--json'], env(`${oldEntry},${newEntry}`), status)).toBe(0);
    expect(JSON.parse(status.stdout[0] as string)).toMatchObject({ currentKeyId: 'new', byKeyId: { old: { card: 5, cvv: 5 } } });

    const rewrap = captureIo();
    expect(await run(['rewrap', '--batch', '2'], env(`${oldEntry},${newEntry}`), rewrap)).toBe(0);
    expect(rewrap.stderr.some((l) => l.includes('(complete)'))).toBe(true);
    expect(JSON.parse(rewrap.stdout[0] as string)).toMatchObject({ done: true, targetKeyId: 'new', rewrapped: 10 });

    const afterwards = captureIo();
    expect(await run(['status'], env(newEntry), afterwards)).toBe(0);
    // Every record moved to the merchant's own key, itself wrapped under the new root key.
    expect(afterwards.stdout).toEqual([
      'current key: new',
      'merchant keys: 5 card, 5 cvv records',
      'merchant keys wrapped under new: 1',
      'fingerprint key: wrapped under new',
    ]);

    const everything = [status, rewrap, afterwards].flatMap((io) => [...io.stdout, ...io.stderr]).join('\n');
    for (const entry of [oldEntry, newEntry]) expect(everything).not.toContain(entry.split(':')[1]);
  });

  it('exits 2 on an unknown command and 78 without a Redis URL', async () => {
    expect(await run(['spin'], env(oldEntry), captureIo())).toBe(2);
    expect(await run(['status'], { NODE_ENV: 'test', VAULT_KEYS: oldEntry }, captureIo())).toBe(78);
  });
});

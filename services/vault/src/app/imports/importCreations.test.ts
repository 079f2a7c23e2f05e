import { Redis } from 'ioredis';
import { useRedisServer } from '@tessera/test-support';
import { CARD_IMPORT_CREATE_QUEUE_KEY, cardImportKey, newCardImportId } from '@tessera/merchant-data';
import { openpgp } from '../../domain/openpgp';
import { openImportPrivateKey } from '../../domain/importKey';
import { RedisImportCreationStore } from '../../store/importCreationStore';
import { RedisImportStore } from '../../store/importStore';
import { keyRingEntry, keyRingOf } from '../../test/builders';
import { answerImportCreation, type ImportCreationDeps } from './importCreations';

jest.setTimeout(60_000);

const db = useRedisServer((url) => new Redis(url));
const ring = keyRingOf(keyRingEntry('k1'));
const NOW = new Date('2026-11-26T12:00:00.000Z');
let merchantKey: { publicKey: string; privateKey: string };
let deps: ImportCreationDeps;
const logged: string[] = [];

beforeAll(async () => {
  merchantKey = await openpgp.generateKey({ type: 'ecc', curve: 'curve25519Legacy', userIDs: [{ name: 'merchant' }] });
  deps = {
    store: new RedisImportStore(db.client),
    creations: new RedisImportCreationStore(db.client),
    keyRing: ring,
    leaseMs: 5000,
    keepMs: 60_000,
    now: () => NOW,
    log: (fields, message) => logged.push(`${message} ${JSON.stringify(fields)}`),
  };
});

/** What the admin service writes for POST /admin/v1/merchants/{id}/imports (its cardImportRequests.ts). */
async function requested(fields: Record<string, string> = {}): Promise<string> {
  const id = newCardImportId();
  await db.client
    .multi()
    .hset(cardImportKey(id, 'meta'), {
      merchantId: 'acme',
      mode: 'live',
      format: 'jsonl',
      keyType: 'curve25519',
      state: 'creating',
      createdAt: NOW.toISOString(),
      publicKey: '',
      reportRecipientKey: merchantKey.publicKey,
      ...fields,
    })
    .sadd(CARD_IMPORT_CREATE_QUEUE_KEY, id)
    .exec();
  return id;
}

test('a creation request gets its own key pair: the public half in the status, the private half sealed under the key ring apart from it', async () => {
  const id = await requested();
  expect(await answerImportCreation(deps, id, 'holder-1')).toBe(true);
  const meta = await deps.store.get(id);
  expect(meta).toMatchObject({ state: 'awaiting_upload', publicKey: expect.stringContaining('BEGIN PGP PUBLIC KEY BLOCK') });
  // The sealed key opens under the ring and matches the public key the operator sees.
  const privateKey = await openImportPrivateKey(ring, id, meta?.sealedPrivateKey as string);
  expect(privateKey.toPublic().getFingerprint()).toBe((await openpgp.readKey({ armoredKey: meta?.publicKey as string })).getFingerprint());
  expect(await db.client.hget(cardImportKey(id, 'meta'), 'publicKeyFingerprint')).toBe(meta?.publicKeyFingerprint);
  expect(await db.client.sismember(CARD_IMPORT_CREATE_QUEUE_KEY, id)).toBe(0);
  // The lease is given back; no key material in the log.
  expect(await db.client.exists(cardImportKey(id, 'lease'))).toBe(0);
  expect(logged.join('\n')).not.toContain('PGP');
});

test('a request whose report key cannot encrypt, or whose mode is not one, fails with a code and no key is made', async () => {
  const badKey = await requested({ reportRecipientKey: '-----BEGIN PGP PUBLIC KEY BLOCK-----\nnope\n-----END PGP PUBLIC KEY BLOCK-----' });
  const badMode = await requested({ mode: 'staging' });
  for (const id of [badKey, badMode]) expect(await answerImportCreation(deps, id, 'holder-1')).toBe(true);
  expect(await deps.store.get(badKey)).toMatchObject({ state: 'failed', failure: 'report_key_unusable', sealedPrivateKey: undefined });
  expect(await deps.store.get(badMode)).toMatchObject({ state: 'failed', failure: 'import_request_invalid', sealedPrivateKey: undefined });
  expect(await db.client.pttl(cardImportKey(badKey, 'meta'))).toBeGreaterThan(0);
  expect(await db.client.smembers(CARD_IMPORT_CREATE_QUEUE_KEY)).not.toEqual(expect.arrayContaining([badKey, badMode]));
});

test('a request another vault holds is left to it, and one already answered is only forgotten', async () => {
  const id = await requested();
  await db.client.set(cardImportKey(id, 'lease'), 'other-vault', 'PX', 5000);
  expect(await answerImportCreation(deps, id, 'holder-1')).toBe(false);
  expect(await deps.store.get(id)).toMatchObject({ state: 'creating', sealedPrivateKey: undefined });
  expect(await db.client.sismember(CARD_IMPORT_CREATE_QUEUE_KEY, id)).toBe(1);

  await db.client.del(cardImportKey(id, 'lease'));
  expect(await answerImportCreation(deps, id, 'holder-1')).toBe(true);
  const made = (await deps.store.get(id))?.publicKey;
  // Listed again (an admin retried): the key is not made a second time.
  await db.client.sadd(CARD_IMPORT_CREATE_QUEUE_KEY, id);
  expect(await answerImportCreation(deps, id, 'holder-1')).toBe(true);
  expect((await deps.store.get(id))?.publicKey).toBe(made);
  expect(await db.client.sismember(CARD_IMPORT_CREATE_QUEUE_KEY, id)).toBe(0);
});

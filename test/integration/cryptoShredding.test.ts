/**
 * Issue 29's done-when for crypto-shredding: two merchants with tokens; two platform operators
 * (each with a second factor) shred one through the admin API; the records of that merchant, as
 * anyone with a copy of Redis had them, open with no key the vault still holds; the other
 * merchant's tokens still render through /v1/proxy; the shredded merchant's tokens answer 404
 * token_not_found (docs/SECURITY.md, "Per-merchant keys and crypto-shredding").
 */
import { Redis } from 'ioredis';
import { AdminClient } from './adminClient';
import { aCard, apiClient, TEST_CARDS, useStack, waitFor, type ApiKey } from './harness';
import { base32Decode, hotp, totpStep } from '../../services/admin/src/domain/totp';
import { gcmOpen } from '../../services/vault/src/domain/aesGcm';
import { EnvelopeOpenError, openRecord, type Envelope, type EnvelopeContext } from '../../services/vault/src/domain/envelope';
import { openFingerprintKey } from '../../services/vault/src/domain/fingerprint';
import { parseKeyRing, type EnvKeyRing, type KeyRing } from '../../services/vault/src/domain/keyRing';
import { openMerchantKek } from '../../services/vault/src/domain/merchantKeys';
import { bindingOfCard, bindingOfCvv } from '../../services/vault/src/domain/recordMetadata';
import { ownerOfMerchantKekKey, parseCard, parseCvv } from '../../services/vault/src/store/records';

jest.setTimeout(120_000);

// Its own stack, with the shipped Redis ACL users: the admin service and the vault reach the
// shred queue only through their own users' patterns.
const env = useStack({ psp: true, redis: { acl: true }, env: { TRUSTED_PROXIES: '127.0.0.1/32' } });

const FIRST = { email: 'first@tessera.test', password: 'first-operator-password-1' };
const SECOND = { email: 'second@tessera.test', password: 'second-operator-password-2' };

let acme: ApiKey;
let globex: ApiKey;
/** The vault's own Redis user: it may read the card records and the merchant keys. */
let vaultRedis: Redis;
let rootRing: EnvKeyRing;

beforeAll(async () => {
  env.stack.createOperator(FIRST.email, FIRST.password, null);
  env.stack.createOperator(SECOND.email, SECOND.password, null);
  acme = env.stack.createKey('acme');
  globex = env.stack.createKey('globex');
  const parsed = parseKeyRing(env.stack.env.VAULT_KEYS as string);
  if (!parsed.ok) throw new Error('the stack has no usable VAULT_KEYS');
  rootRing = parsed.ring;
});

/** A platform operator signed in with a second factor, as the dashboard would leave them. */
async function operatorWithMfa(op: { email: string; password: string }, ip: string): Promise<AdminClient> {
  const client = new AdminClient(env.stack.adminUrl, ip);
  expect((await client.login(op.email, op.password)).status).toBe(200);
  const enrolment = await client.call('POST', '/mfa/enrolment');
  expect(enrolment.status).toBe(200);
  const code = hotp(base32Decode(enrolment.body.secret as string) as Buffer, totpStep(Date.now()));
  const confirmed = await client.call('POST', '/mfa/enrolment/confirm', { code });
  expect(confirmed.status).toBe(200);
  client.csrfToken = confirmed.body.csrfToken as string;
  return client;
}

interface RawRecord {
  kind: 'card' | 'cvv';
  token: string;
  raw: Buffer;
}

/** SCAN, as the vault's user may (it may not run KEYS). */
async function scanKeys(match: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await vaultRedis.scan(cursor, 'MATCH', match, 'COUNT', 500);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found;
}

/** Every card and CVV record of a merchant, exactly as stored: what a backup of Redis holds. */
async function rawRecordsOf(merchantId: string): Promise<RawRecord[]> {
  const records: RawRecord[] = [];
  for (const key of await scanKeys('tessera:card:{*')) {
    const token = key.slice('tessera:card:{'.length, -1);
    const raw = await vaultRedis.getBuffer(key);
    if (raw === null || parseCard(raw).merchantId !== merchantId) continue;
    records.push({ kind: 'card', token, raw });
    const cvv = await vaultRedis.getBuffer(`tessera:cvv:{${token}}`);
    if (cvv !== null) records.push({ kind: 'cvv', token, raw: cvv });
  }
  return records;
}

function envelopeOf(record: RawRecord): { sealed: Envelope; ctx: EnvelopeContext } {
  if (record.kind === 'card') {
    const card = parseCard(record.raw);
    return {
      sealed: card.sealed,
      ctx: { merchantId: card.merchantId, token: record.token, kind: 'card', mode: card.mode ?? null, ...bindingOfCard(card) },
    };
  }
  // A CVV record names no merchant: it is its card's (the copies are acme's).
  const cvv = parseCvv(record.raw);
  return {
    sealed: cvv.sealed,
    ctx: { merchantId: 'acme', token: record.token, kind: 'cvv', mode: cvv.mode ?? null, ...bindingOfCvv(cvv) },
  };
}

/** A ring that tries one given key whatever key id the record names. */
function ringOfOneKey(key: Buffer, keyId: string): KeyRing {
  return {
    currentKeyId: keyId,
    keyIds: [keyId],
    providerOf: () => 'env',
    wrap: () => {
      throw new Error('not used');
    },
    unwrap: (_id, sealed, aad) => gcmOpen(key, aad, sealed),
  };
}

/** Every key the vault holds now: the root keys, the fingerprint key, and every merchant key left in Redis. */
async function everyKeyTheVaultHolds(): Promise<Buffer[]> {
  const keys = rootRing.keyIds.map((id) => rootRing.key(id) as Buffer);
  const fingerprintKey = await vaultRedis.get('tessera:card:fingerprint-key');
  if (fingerprintKey !== null) keys.push(openFingerprintKey(rootRing, fingerprintKey));
  const kekKeys = await scanKeys('tessera:card:kek:*');
  for (const key of kekKeys) {
    const owner = ownerOfMerchantKekKey(key);
    const stored = await vaultRedis.get(key);
    if (owner === undefined || stored === null) continue;
    keys.push(openMerchantKek(rootRing, owner.merchantId, owner.mode as 'test' | 'live', stored).key);
  }
  return keys;
}

function opensWith(record: RawRecord, key: Buffer): boolean {
  const { sealed, ctx } = envelopeOf(record);
  try {
    openRecord(ringOfOneKey(key, sealed.keyId), ctx, sealed).fill(0);
    return true;
  } catch (err) {
    if (err instanceof EnvelopeOpenError) return false;
    throw err;
  }
}

describe('crypto-shredding a merchant', () => {
  // Inside the describe, so it closes before the stack's afterAll stops Redis.
  beforeAll(() => {
    vaultRedis = new Redis(env.redis.users?.vault as string);
  });
  afterAll(async () => {
    await vaultRedis.quit();
  });

  it('leaves its records openable by no key the vault holds, answers its tokens 404, and keeps the other merchant working', async () => {
    const asAcme = apiClient(env.stack, acme.apiKey);
    const asGlobex = apiClient(env.stack, globex.apiKey);
    const acmeTokens: string[] = [];
    for (const number of [TEST_CARDS.visa, TEST_CARDS.mastercard]) {
      const res = await asAcme('POST', '/v1/token', aCard({ number, aliasFormats: ['uuid'] }));
      expect(res.status).toBe(201);
      acmeTokens.push(res.body.token as string);
    }
    const kept = await asGlobex('POST', '/v1/token', aCard({ number: TEST_CARDS.visa }));
    expect(kept.status).toBe(201);

    // Both merchants' forward-proxy CAs (made on first use): acme's is sealed under the root key, not acme's.
    const acmeCa = await asAcme('GET', '/v1/forward-proxy/ca.pem');
    expect(acmeCa.status).toBe(200);
    expect((await asGlobex('GET', '/v1/forward-proxy/ca.pem')).status).toBe(200);
    expect(await vaultRedis.get('tessera:ca:{m:acme}')).not.toBeNull();

    // A copy of acme's records, as a Redis backup would keep them after the shred.
    const copies = await rawRecordsOf('acme');
    expect(copies.map((r) => r.kind).sort()).toEqual(['card', 'card', 'cvv', 'cvv']);
    // The control: while acme's key exists, it opens every copy (so the check below can fail).
    const acmeKeyBefore = openMerchantKek(rootRing, 'acme', 'test', (await vaultRedis.get('tessera:card:kek:{m:acme}:test')) as string);
    for (const copy of copies) expect(opensWith(copy, acmeKeyBefore.key)).toBe(true);
    // No key but acme's opens them even now: each data key is wrapped under acme's key only.
    for (const copy of copies)
      for (const key of await everyKeyTheVaultHolds()) if (!key.equals(acmeKeyBefore.key)) expect(opensWith(copy, key)).toBe(false);

    // Two platform operators: one requests, the other approves; neither can do both.
    const first = await operatorWithMfa(FIRST, '198.18.1.1');
    const second = await operatorWithMfa(SECOND, '198.18.1.2');
    const requested = await first.call('POST', '/merchants/acme/shred-requests', {
      mode: 'all',
      reason: 'contract ended, data to be destroyed',
    });
    expect(requested.status).toBe(201);
    const orderId = requested.body.id as string;
    const selfApproved = await first.call('POST', `/shred-orders/${orderId}/approve`);
    expect(selfApproved.status).toBe(403);
    expect(selfApproved.body.error.code).toBe('second_operator_required');
    // Nothing happened yet: acme's tokens still work.
    expect((await asAcme('GET', `/v1/token/${acmeTokens[0]}`)).status).toBe(200);

    const approved = await second.call('POST', `/shred-orders/${orderId}/approve`);
    expect(approved.status).toBe(200);
    expect(approved.body.status).toBe('approved');
    await waitFor(
      async () => (await first.call('GET', `/shred-orders/${orderId}`)).body.status === 'done',
      'the vault to carry out the order',
      60_000,
    );
    const done = (await first.call('GET', `/shred-orders/${orderId}`)).body;
    expect(done).toMatchObject({
      status: 'done',
      tokensSwept: 2,
      approvedBy: { email: SECOND.email },
      requestedBy: { email: FIRST.email },
    });

    // acme's key is gone and its records are swept; the copies open with no key the vault still holds.
    expect(await vaultRedis.get('tessera:card:kek:{m:acme}:test')).toBeNull();
    expect(await rawRecordsOf('acme')).toEqual([]);
    const remaining = await everyKeyTheVaultHolds();
    expect(remaining.some((key) => key.equals(acmeKeyBefore.key))).toBe(false);
    for (const copy of copies) for (const key of remaining) expect(opensWith(copy, key)).toBe(false);

    // Mode "all": acme's forward-proxy CA is deleted with its keys; globex's stays. acme's next use makes a new CA.
    expect(await vaultRedis.get('tessera:ca:{m:acme}')).toBeNull();
    expect(await vaultRedis.get('tessera:ca:{m:globex}')).not.toBeNull();
    const newCa = await asAcme('GET', '/v1/forward-proxy/ca.pem');
    expect(newCa.status).toBe(200);
    expect(newCa.text).not.toBe(acmeCa.text);

    // acme's tokens (and aliases) answer 404 token_not_found, on every route.
    for (const token of acmeTokens) {
      const read = await asAcme('GET', `/v1/token/${token}`);
      expect(read.status).toBe(404);
      expect(read.body.error.code).toBe('token_not_found');
      const proxied = await asAcme('POST', '/v1/proxy', {
        method: 'post',
        token,
        pspUrl: `${env.psp.url}/charge`,
        pspBody: 'pan=[CARD_NUMBER]',
      });
      expect(proxied.status).toBe(404);
      expect(proxied.body.error.code).toBe('token_not_found');
    }
    expect(env.psp.requests).toHaveLength(0);

    // globex's token still renders through /v1/proxy.
    const charged = await asGlobex('POST', '/v1/proxy', {
      method: 'post',
      token: kept.body.token,
      pspUrl: `${env.psp.url}/charge`,
      pspBody: 'pan=[CARD_NUMBER]',
    });
    expect(charged.status).toBe(200);
    expect(env.psp.requests.map((r) => r.body.toString('utf8'))).toEqual([`pan=${TEST_CARDS.visa}`]);

    // Audited in the admin log, told to acme by an event.
    const audit = await second.call('GET', '/audit?merchantId=acme');
    expect((audit.body.entries as Array<{ action: string; actor: string }>).map((e) => [e.action, e.actor])).toEqual(
      expect.arrayContaining([
        ['merchant.shred_requested', FIRST.email],
        ['merchant.shred_approved', SECOND.email],
      ]),
    );
    const events = await asAcme('GET', '/v1/events?type=merchant.shredded');
    expect(events.status).toBe(200);
    expect(events.body.data.map((e: { data: { object: unknown } }) => e.data.object)).toEqual([
      { id: orderId, keyDestroyedAt: Math.floor(Date.parse(done.keyDestroyedAt as string) / 1000), tokensSwept: 2 },
    ]);
  });
});

import { Redis } from 'ioredis';
import { TesseraError } from '@tessera/common';
import { cvcSessionDigest, newCvcSessionSecret, RedisCvcSessionStore } from '@tessera/merchant-data';
import { useRedisServer } from '@tessera/test-support';
import type { TokenOwner } from '../domain/card';
import type { RedisCardStore } from '../store/redisCardStore';
import { aCard, aVault, anEmptyRedisCardStore, codeOf } from '../test/builders';
import { attachCvv, type CvcAttachDeps } from './cvcGrants';
import type { VaultCaller } from './callers';
import type { Vault } from './vault';

/**
 * The vault takes the CVC session (the grant a merchant's server opened for one token) itself
 * before it stores a CVC under it: the process facing the browser cannot attach without one.
 * These cases were the gateway's while it took the grant (services/gateway/src/app/cvcSessions.test.ts).
 */
jest.setTimeout(30_000);

const db = useRedisServer((url) => new Redis(url));
const OWNER: TokenOwner = { merchantId: 'merchant_a', mode: 'test' };
const TTL_MS = 600_000;

let clock: Date;
let store: RedisCardStore;
let vault: Vault;
let grants: RedisCvcSessionStore;
/** The next attach fails with this before the vault is asked, as a store outage or a refusal would. */
let failNext: TesseraError | undefined;
let deps: CvcAttachDeps;
let token: string;

beforeEach(async () => {
  clock = new Date();
  store = await anEmptyRedisCardStore(db);
  vault = aVault({ store });
  grants = new RedisCvcSessionStore(db.client, () => clock);
  failNext = undefined;
  deps = {
    vault: {
      attachCvv: (...args) => {
        const failure = failNext;
        failNext = undefined;
        return failure ? Promise.reject(failure) : vault.attachCvv(...args);
      },
    },
    grants,
    now: () => clock,
  };
  ({ token } = await vault.tokenize(aCard({ cvv: '', provisional: true })));
});

afterEach(async () => {
  await store.close();
});

/** A grant for `token` of OWNER, as the gateway's POST /v1/token/{token}/cvc-sessions writes it. */
async function openGrant(forToken = token): Promise<string> {
  const secret = newCvcSessionSecret();
  await grants.create({
    digest: cvcSessionDigest(secret),
    merchantId: OWNER.merchantId,
    mode: 'test',
    token: forToken,
    keyId: 'key_1',
    createdAt: clock.toISOString(),
    expiresAt: new Date(clock.getTime() + TTL_MS).toISOString(),
  });
  return secret;
}

const attach = (cvcSession: string, caller: VaultCaller = 'fields', owner: TokenOwner = OWNER, forToken = token, cvv = '123') =>
  attachCvv(deps, caller, { owner, token: forToken, cvv: { value: cvv, isInteger: false }, cvcSession });
const outcomeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'attached',
    (err: TesseraError) => err.code,
  );
const cvvStored = async () => (await vault.getToken(OWNER, token)).cvvAvailable;

describe('CVC attach under a grant (real redis-server)', () => {
  it('attaches one CVC under a grant, once; a second use is refused as used', async () => {
    const secret = await openGrant();
    expect((await attach(secret)).cvvAvailable).toBe(true);
    expect(await codeOf(attach(secret))).toBe('cvc_session_used');
  });

  it('of two concurrent attaches under one grant, exactly one stores a CVC', async () => {
    const secret = await openGrant();
    expect((await Promise.all([outcomeOf(attach(secret)), outcomeOf(attach(secret))])).sort()).toEqual(['attached', 'cvc_session_used']);
  });

  it('refuses a missing grant from the fields identity, and an unknown, malformed or expired one, or one of another token, merchant or mode, storing nothing', async () => {
    const secret = await openGrant();
    const { token: other } = await vault.tokenize(aCard({ cvv: '' }));
    expect(await codeOf(attach(''))).toBe('cvc_session_required');
    expect(await codeOf(attach('cvcs_short'))).toBe('cvc_session_not_found');
    expect(await codeOf(attach(`cvcs_${'A'.repeat(43)}`))).toBe('cvc_session_not_found');
    expect(await codeOf(attach(secret, 'fields', OWNER, other))).toBe('cvc_session_not_found');
    expect(await codeOf(attach(secret, 'fields', { ...OWNER, merchantId: 'merchant_b' }))).toBe('cvc_session_not_found');
    expect(await codeOf(attach(secret, 'fields', { ...OWNER, mode: 'live' }))).toBe('cvc_session_not_found');
    expect(await codeOf(attach(secret, 'fields', { ...OWNER, mode: '' }))).toBe('cvc_session_not_found');
    clock = new Date(clock.getTime() + TTL_MS);
    expect(await codeOf(attach(secret))).toBe('cvc_session_expired');
    expect(await cvvStored()).toBe(false);
    expect((await vault.getToken(OWNER, other)).cvvAvailable).toBe(false);
  });

  it('gives the grant back when the CVC is refused, so the shopper can correct it', async () => {
    const secret = await openGrant();
    expect(await codeOf(attach(secret, 'fields', OWNER, token, '12'))).toBe('cvv_invalid');
    expect((await attach(secret)).cvvAvailable).toBe(true);
  });

  it('keeps the grant used when the attach fails with 503, as the write may have landed', async () => {
    const secret = await openGrant();
    failNext = new TesseraError('service_unavailable');
    expect(await codeOf(attach(secret))).toBe('service_unavailable');
    expect(await codeOf(attach(secret))).toBe('cvc_session_used');
    expect(await cvvStored()).toBe(false);
  });

  it("attaches without a grant for the merchant's own server (the gateway's POST /v1/token/{token}/cvc), as before", async () => {
    const record = await attach('', 'service');
    expect(record.cvvAvailable).toBe(true);
    expect(record.fingerprint).not.toBe('');
  });

  it('answers the fields identity without fingerprint or BIN', async () => {
    const record = await attach(await openGrant());
    expect(record).toMatchObject({ token, last4: '4242', brand: 'visa', cvvAvailable: true, fingerprint: '', bin: '' });
  });

  it('refuses every grant when the session store is down, storing nothing', async () => {
    const secret = await openGrant();
    const down = () => Promise.reject(new TesseraError('service_unavailable'));
    deps = { ...deps, grants: { create: down, claim: down, release: down } };
    expect(await codeOf(attach(secret))).toBe('service_unavailable');
    expect(await cvvStored()).toBe(false);
  });
});

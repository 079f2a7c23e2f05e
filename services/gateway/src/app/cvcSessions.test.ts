import { TesseraError } from '@tessera/common';
import type { AttachCvvRequest, TokenRef } from '@tessera/protos';
import { aTokenRecord } from '../testing/fixtures';
import { useGatewayRedis } from '../testing/redis';
import { RedisCvcSessionStore } from '@tessera/merchant-data';
import { attachCvcUnderSession, openCvcSession, type CvcSessionDeps } from './cvcSessions';

const KEY = { id: 'key_1', merchantId: 'shop', mode: 'test' as const };
const TOKEN = 'tok.AAAAAAAAAAAAAAAAAAAAAA';
const CTX = { requestId: 'req_1' };
const TTL_SECONDS = 600;

/** The vault's two calls these use cases make, recorded. */
class VaultCalls {
  attached: AttachCvvRequest[] = [];
  async getToken(ref: TokenRef) {
    if (ref.token !== TOKEN || ref.merchantId !== KEY.merchantId) throw new TesseraError('token_not_found');
    return aTokenRecord({ token: ref.token });
  }
  async attachCvv(request: AttachCvvRequest) {
    this.attached.push(request);
    return aTokenRecord({ token: request.token, cvvAvailable: true });
  }
}

describe('CVC sessions', () => {
  const redis = useGatewayRedis();
  let clock: Date;
  let vault: VaultCalls;
  let deps: CvcSessionDeps;

  beforeEach(() => {
    clock = new Date('2030-01-01T00:00:00Z');
    vault = new VaultCalls();
    deps = { sessions: new RedisCvcSessionStore(redis.redis, () => clock), vault, ttlSeconds: TTL_SECONDS, now: () => clock };
  });

  const attach = (cvcSession: string | undefined, token = TOKEN, key: typeof KEY = KEY) =>
    attachCvcUnderSession(deps, key, token, { cvv: '123', cvcSession }, CTX);
  const codeOf = (promise: Promise<unknown>) =>
    promise.then(
      () => 'attached',
      (err: TesseraError) => err.code,
    );

  it('opens a grant for a token of the key’s merchant only, valid for CVC_SESSION_TTL_SECONDS', async () => {
    const opened = await openCvcSession(deps, KEY, TOKEN, CTX);
    expect(opened.secret).toMatch(/^cvcs_[A-Za-z0-9_-]{43}$/);
    expect(opened.record.expiresAt).toBe('2030-01-01T00:10:00.000Z');
    expect(await codeOf(openCvcSession(deps, { ...KEY, merchantId: 'other' }, TOKEN, CTX))).toBe('token_not_found');
  });

  // Taking the grant (once, atomically; given back on a refused CVC, kept on a 5xx) is the vault's
  // now: services/vault/src/app/cvcGrants.test.ts holds those cases.
  it('hands the grant to the vault with the CVC, never an attach without one', async () => {
    const { secret } = await openCvcSession(deps, KEY, TOKEN, CTX);
    expect(await codeOf(attach(secret))).toBe('attached');
    expect(vault.attached).toEqual([
      { merchantId: 'shop', mode: 'test', token: TOKEN, cvv: '123', cvvIsInteger: false, cvcSession: secret },
    ]);
  });

  it('refuses a missing or malformed grant without asking the vault', async () => {
    expect(await codeOf(attach(undefined))).toBe('cvc_session_required');
    expect(await codeOf(attach('cvcs_short'))).toBe('cvc_session_not_found');
    expect(vault.attached).toEqual([]);
  });
});

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

/** The vault's two calls these use cases make, recorded; `refuse` makes the next attach fail like the vault would. */
class VaultCalls {
  attached: AttachCvvRequest[] = [];
  refuse: TesseraError | undefined;
  async getToken(ref: TokenRef) {
    if (ref.token !== TOKEN || ref.merchantId !== KEY.merchantId) throw new TesseraError('token_not_found');
    return aTokenRecord({ token: ref.token });
  }
  async attachCvv(request: AttachCvvRequest) {
    const refusal = this.refuse;
    this.refuse = undefined;
    if (refusal) throw refusal;
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

  it('attaches one CVC under a grant, once; a second use is refused as used', async () => {
    const { secret } = await openCvcSession(deps, KEY, TOKEN, CTX);
    expect(await codeOf(attach(secret))).toBe('attached');
    expect(await codeOf(attach(secret))).toBe('cvc_session_used');
    expect(vault.attached).toEqual([{ merchantId: 'shop', mode: 'test', token: TOKEN, cvv: '123', cvvIsInteger: false }]);
  });

  it('of two concurrent attaches under one grant, exactly one reaches the vault', async () => {
    const { secret } = await openCvcSession(deps, KEY, TOKEN, CTX);
    expect((await Promise.all([codeOf(attach(secret)), codeOf(attach(secret))])).sort()).toEqual(['attached', 'cvc_session_used']);
    expect(vault.attached).toHaveLength(1);
  });

  it('refuses a missing, unknown, expired grant and one of another token, merchant or mode, without asking the vault', async () => {
    const { secret } = await openCvcSession(deps, KEY, TOKEN, CTX);
    expect(await codeOf(attach(undefined))).toBe('cvc_session_required');
    expect(await codeOf(attach('cvcs_short'))).toBe('cvc_session_not_found');
    expect(await codeOf(attach(`cvcs_${'A'.repeat(43)}`))).toBe('cvc_session_not_found');
    expect(await codeOf(attach(secret, 'tok.BBBBBBBBBBBBBBBBBBBBBB'))).toBe('cvc_session_not_found');
    expect(await codeOf(attach(secret, TOKEN, { ...KEY, merchantId: 'other' }))).toBe('cvc_session_not_found');
    expect(await codeOf(attach(secret, TOKEN, { ...KEY, mode: 'live' as 'test' }))).toBe('cvc_session_not_found');
    clock = new Date(clock.getTime() + TTL_SECONDS * 1000);
    expect(await codeOf(attach(secret))).toBe('cvc_session_expired');
    expect(vault.attached).toEqual([]);
  });

  it('gives the grant back when the vault refuses the CVC, so the shopper can correct it', async () => {
    const { secret } = await openCvcSession(deps, KEY, TOKEN, CTX);
    vault.refuse = new TesseraError('cvv_invalid');
    expect(await codeOf(attach(secret))).toBe('cvv_invalid');
    expect(await codeOf(attach(secret))).toBe('attached');
  });

  it('keeps the grant used when the attach fails with 503, as the vault may have run it late and attached the CVC', async () => {
    const { secret } = await openCvcSession(deps, KEY, TOKEN, CTX);
    vault.refuse = new TesseraError('service_unavailable');
    expect(await codeOf(attach(secret))).toBe('service_unavailable');
    expect(await codeOf(attach(secret))).toBe('cvc_session_used');
    expect(vault.attached).toEqual([]);
  });
});

import { TesseraError } from '@tessera/common';
import type { TokenRef } from '@tessera/protos';
import { aTokenRecord } from '../testing/fixtures';
import { useGatewayRedis } from '../testing/redis';
import { RedisCvcSessionStore } from '@tessera/merchant-data';
import { openCvcSession, type CvcSessionDeps } from './cvcSessions';

const KEY = { id: 'key_1', merchantId: 'shop', mode: 'test' as const };
const TOKEN = 'tok.AAAAAAAAAAAAAAAAAAAAAA';
const CTX = { requestId: 'req_1' };
const TTL_SECONDS = 600;

/** The vault's call opening a grant makes: the token must be the key's merchant's. */
class VaultCalls {
  async getToken(ref: TokenRef) {
    if (ref.token !== TOKEN || ref.merchantId !== KEY.merchantId) throw new TesseraError('token_not_found');
    return aTokenRecord({ token: ref.token });
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

  const codeOf = (promise: Promise<unknown>) =>
    promise.then(
      () => 'opened',
      (err: TesseraError) => err.code,
    );

  it('opens a grant for a token of the key’s merchant only, valid for CVC_SESSION_TTL_SECONDS', async () => {
    const opened = await openCvcSession(deps, KEY, TOKEN, CTX);
    expect(opened.secret).toMatch(/^cvcs_[A-Za-z0-9_-]{43}$/);
    expect(opened.record.expiresAt).toBe('2030-01-01T00:10:00.000Z');
    expect(await codeOf(openCvcSession(deps, { ...KEY, merchantId: 'other' }, TOKEN, CTX))).toBe('token_not_found');
  });
});

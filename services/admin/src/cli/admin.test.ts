import { Redis } from 'ioredis';
import { verifyPassword } from '../domain/passwords';
import { loginAccountBucket } from '../domain/operators';
import { RedisLoginThrottle, RedisOperatorStore } from '../store/redisAdminStores';
import { startRedisServer, type RedisServer } from '@tessera/test-support';
import { runKeysCli } from './keys';
import { runAdminCli } from './admin';

async function run(argv: string[], env: NodeJS.ProcessEnv, stdin = '') {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdminCli(argv, env, { out: (l) => out.push(l), err: (l) => err.push(l), readStdin: async () => stdin });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

// scrypt at N = 2^17 takes a second or more on a loaded machine.
jest.setTimeout(60_000);

describe('admin CLI (operators)', () => {
  let server: RedisServer;
  let env: NodeJS.ProcessEnv;
  let redis: Redis;
  let operators: RedisOperatorStore;

  beforeAll(async () => {
    server = await startRedisServer();
    env = { REDIS_URL: server.url, NODE_ENV: 'test' };
    redis = new Redis(server.url);
    operators = new RedisOperatorStore(redis);
  });
  afterAll(async () => {
    await redis.quit();
    await server.stop();
  });
  beforeEach(async () => {
    await redis.flushall();
  });

  it('creates a merchant operator with the password from stdin, stored only as a scrypt hash', async () => {
    const res = await run(['create', '--email', 'Ops@Acme.test', '--merchant', 'acme', '--password-stdin'], env, 'a-long-password-1\n');
    expect(res).toMatchObject({ code: 0 });
    expect(res.out).toMatch(/Created operator ops@acme\.test \(op_[\w-]+, merchant acme, two-factor off\)/);
    const op = await operators.findByEmail('ops@acme.test');
    expect(op?.merchantId).toBe('acme');
    expect(op?.passwordHash).toMatch(/^scrypt\$/);
    expect(await verifyPassword('a-long-password-1', op?.passwordHash ?? '')).toBe(true);
    expect(JSON.stringify(await redis.keys('*'))).not.toContain('a-long-password-1');
  });

  it('is reachable as `npm run keys -- admin ...`', async () => {
    const out: string[] = [];
    const code = await runKeysCli(['admin', 'list'], env, { out: (l) => out.push(l), err: () => undefined });
    expect(code).toBe(0);
    expect(out).toEqual(['No operators.']);
  });

  it.each<[string, string[], RegExp]>([
    ['no --password-stdin', ['create', '--email', 'a@b.test', '--global'], /--password-stdin is required/],
    ['both --merchant and --global', ['create', '--email', 'a@b.test', '--global', '--merchant', 'x', '--password-stdin'], /exactly one/],
    ['neither --merchant nor --global', ['create', '--email', 'a@b.test', '--password-stdin'], /exactly one/],
    ['a bad email', ['create', '--email', 'not-an-email', '--global', '--password-stdin'], /not an email address/],
    ['a password as an argument', ['create', '--email', 'a@b.test', '--global', '--password', 'x'], /Unknown option/],
    ['an unknown command', ['promote', '--email', 'a@b.test'], /Unknown or malformed command/],
  ])('exits 2 on %s', async (_label, argv, message) => {
    const res = await run(argv, env, 'a-long-password-1');
    expect(res.code).toBe(2);
    expect(res.err).toMatch(message);
  });

  it('refuses a short password and a duplicate email with exit 1', async () => {
    expect(await run(['create', '--email', 'a@b.test', '--global', '--password-stdin'], env, 'short')).toMatchObject({ code: 1 });
    expect((await run(['create', '--email', 'a@b.test', '--global', '--password-stdin'], env, 'long-enough-pw-1')).code).toBe(0);
    const dup = await run(['create', '--email', 'A@B.test', '--global', '--password-stdin'], env, 'long-enough-pw-1');
    expect(dup).toMatchObject({ code: 1, err: expect.stringMatching(/already exists/) });
  });

  it('changes a password, disables and enables an operator, and lists without hashes', async () => {
    await run(['create', '--email', 'a@b.test', '--merchant', 'acme', '--password-stdin'], env, 'first-password-1');
    expect((await run(['set-password', '--email', 'a@b.test', '--password-stdin'], env, 'second-password-2')).code).toBe(0);
    const op = await operators.findByEmail('a@b.test');
    expect(await verifyPassword('second-password-2', op?.passwordHash ?? '')).toBe(true);
    expect((await run(['disable', '--email', 'a@b.test'], env)).out).toMatch(/Disabled a@b\.test .*disabled/);
    expect((await operators.findByEmail('a@b.test'))?.disabledAt).toBeDefined();
    expect((await run(['enable', '--email', 'a@b.test'], env)).code).toBe(0);
    const listed = await run(['list', '--json'], env);
    expect(JSON.parse(listed.out)).toEqual([expect.objectContaining({ email: 'a@b.test', merchantId: 'acme' })]);
    expect(listed.out).not.toContain('scrypt');
    expect((await run(['disable', '--email', 'nobody@b.test'], env)).code).toBe(1);
  });

  it('ends the sessions of an operator whose password is changed', async () => {
    await run(['create', '--email', 'a@b.test', '--merchant', 'acme', '--password-stdin'], env, 'first-password-1');
    const before = await operators.findByEmail('a@b.test');
    const res = await run(['set-password', '--email', 'a@b.test', '--password-stdin'], env, 'second-password-2');
    expect(res.out).toMatch(/sessions have ended/);
    expect((await operators.findByEmail('a@b.test'))?.credentialsVersion).toBe((before?.credentialsVersion ?? 0) + 1);
  });

  it("resets a locked-out operator's second factor, ends their sessions and writes it to the audit log", async () => {
    await run(['create', '--email', 'lost@b.test', '--merchant', 'acme', '--password-stdin'], env, 'first-password-1');
    const op = await operators.findByEmail('lost@b.test');
    const mfa = { secret: 'v1.a.b.c', enabledAt: new Date().toISOString(), recoveryCodes: ['digest-1'] };
    await operators.update(op?.id ?? '', { mfa, credentialsChanged: true });
    expect((await run(['list'], env)).out).toMatch(/lost@b\.test .*two-factor on/);
    const listed = await run(['list', '--json'], env);
    expect(JSON.parse(listed.out)).toEqual([expect.objectContaining({ email: 'lost@b.test', mfaEnabled: true, recoveryCodesLeft: 1 })]);
    expect(listed.out).not.toMatch(/v1\.a\.b\.c|digest-1|scrypt/);

    const res = await run(['mfa', 'reset', '--email', 'lost@b.test'], env);
    expect(res).toMatchObject({ code: 0, out: expect.stringMatching(/Reset the second factor of lost@b\.test/) });
    const after = await operators.findByEmail('lost@b.test');
    expect(after?.mfa).toBeUndefined();
    expect(after?.credentialsVersion).toBe(2);
    const audit = (await redis.lrange('{tessera-gateway}:tessera:audit', 0, -1)).map((line) => JSON.parse(line));
    expect(audit).toEqual([
      expect.objectContaining({
        action: 'mfa.reset',
        merchantId: 'acme',
        actor: expect.stringMatching(/^cli:/),
        details: { operator: 'lost@b.test', hadMfa: true },
      }),
    ]);
    expect((await run(['mfa', 'reset', '--email', 'nobody@b.test'], env)).code).toBe(1);
    expect((await run(['mfa', 'wipe', '--email', 'lost@b.test'], env)).code).toBe(2);
  });

  it('lifts the sign-in lock of an account and writes it to the audit log', async () => {
    await run(['create', '--email', 'locked@b.test', '--merchant', 'acme', '--password-stdin'], env, 'first-password-1');
    const throttle = new RedisLoginThrottle(redis);
    const bucket = `acct:${loginAccountBucket('locked@b.test')}`;
    await throttle.lock(bucket, 1_800_000);
    const res = await run(['unlock', '--email', 'locked@b.test'], env);
    expect(res).toMatchObject({ code: 0, out: expect.stringMatching(/^Unlocked locked@b\.test/) });
    expect(await throttle.lockRemainingMs(bucket)).toBe(0);
    const [entry] = (await redis.lrange('{tessera-gateway}:tessera:audit', 0, 0)).map((line) => JSON.parse(line));
    expect(entry).toMatchObject({ action: 'login.unlocked', merchantId: 'acme', details: { operator: 'locked@b.test', wasLocked: true } });
  });

  it('exits 2 without REDIS_URL', async () => {
    const res = await run(['list'], { NODE_ENV: 'test' });
    expect(res.code).toBe(2);
    expect(res.err).toMatch(/TESSERA_DEV_ADMIN_PASSWORD/);
  });
});

import crypto from 'node:crypto';
import { parseCidrList } from '@tessera/common';
import { newOperatorRecord } from '../domain/operators';
import { hashPassword, verifyPassword } from '../domain/passwords';
import { base32Decode, totp } from '../domain/totp';
import { RedisOperatorStore } from '../store/redisAdminStores';
import { anAdminDeps, TEST_PEPPER } from '../testing/fixtures';
import { useAdminRedis } from '../testing/redis';
import { startApp, type RunningApp, type TestResponse } from '../../../../packages/edge/src/testing/http';
import { createAdminApp } from './adminRouter';

jest.setTimeout(120_000);

const db = useAdminRedis();

const PASSWORD = 'operator-password-1';

/** One browser: its cookies (session and trusted device), CSRF token and client address. */
class Browser {
  cookies = new Map<string, string>();
  csrf: string | undefined;
  constructor(
    readonly app: RunningApp,
    public ip: string,
  ) {}

  async call(method: string, path: string, body?: unknown): Promise<TestResponse> {
    const headers: Record<string, string> = { 'x-forwarded-for': this.ip };
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (this.csrf !== undefined && method !== 'GET') headers['x-csrf-token'] = this.csrf;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await this.app.request(method, `/admin/v1${path}`, {
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const setCookie = res.headers['set-cookie'] ?? [];
    for (const line of setCookie) {
      const [pair] = line.split(';');
      const eq = (pair ?? '').indexOf('=');
      const name = (pair ?? '').slice(0, eq);
      const value = (pair ?? '').slice(eq + 1);
      if (value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    if (res.status === 200 && res.headers['content-type']?.includes('json')) {
      const json = res.json();
      if (typeof json.csrfToken === 'string') this.csrf = json.csrfToken;
    }
    return res;
  }

  login(email: string, password: string, extra: { code?: string; recoveryCode?: string } = {}): Promise<TestResponse> {
    return this.call('POST', '/login', { email, password, ...extra });
  }
}

let clockMs = Date.parse('2026-03-01T12:00:00Z');
const codeAt = (secret: Buffer, offsetSteps = 0) => totp(secret, clockMs + offsetSteps * 30_000);
/** The next 30-second step, so a fresh code is valid (the last one is spent). */
const nextStep = () => {
  clockMs += 30_000;
};

async function setUp(
  options: {
    mfaRequired?: boolean;
    maxPerAccount?: number;
    /** The operators of an earlier setUp, kept; without them every store starts empty. */
    operators?: RedisOperatorStore;
    pepper?: string;
    previousPeppers?: string[];
  } = {},
) {
  if (options.operators === undefined) await db.redis.flushall();
  const operators = options.operators ?? new RedisOperatorStore(db.redis);
  const deps = anAdminDeps(db.redis, {
    operators,
    pepper: options.pepper ?? TEST_PEPPER,
    previousPeppers: options.previousPeppers ?? [],
    trustedProxies: parseCidrList(['127.0.0.1/32']),
    config: {
      ADMIN_SESSION_IDLE_SECONDS: 900,
      ADMIN_SESSION_MAX_SECONDS: 28_800,
      ADMIN_LOGIN_WINDOW_SECONDS: 3600,
      ADMIN_LOGIN_MAX_PER_IP: 1000,
      ADMIN_LOGIN_MAX_PER_ACCOUNT: options.maxPerAccount ?? 10,
      ADMIN_LOGIN_MAX_PER_SOURCE: 5,
      ADMIN_LOGIN_LOCKOUT_SECONDS: 1800,
    },
    mfaRequired: options.mfaRequired ?? false,
    now: () => new Date(clockMs),
  });
  const app = await startApp(createAdminApp(deps));
  return { app, operators, deps };
}

async function createOperator(operators: RedisOperatorStore, email: string, passwordHash?: string) {
  const op = newOperatorRecord({
    email,
    passwordHash: passwordHash ?? (await hashPassword(PASSWORD)),
    merchantId: 'acme',
    now: new Date(),
  });
  await operators.create(op);
  return op;
}

/** Signs in with the password and sets up TOTP; returns the secret the page showed and the recovery codes. */
async function enrol(browser: Browser, email: string): Promise<{ secret: Buffer; recoveryCodes: string[] }> {
  expect((await browser.login(email, PASSWORD)).status).toBe(200);
  const started = await browser.call('POST', '/mfa/enrolment');
  expect(started.status).toBe(200);
  const { secret, otpauthUri } = started.json();
  expect(otpauthUri).toContain(`secret=${secret}`);
  const bytes = base32Decode(secret) as Buffer;
  const confirmed = await browser.call('POST', '/mfa/enrolment/confirm', { code: codeAt(bytes) });
  expect(confirmed.status).toBe(200);
  return { secret: bytes, recoveryCodes: confirmed.json().recoveryCodes };
}

describe('dashboard sign-in with a second factor', () => {
  let ctx: Awaited<ReturnType<typeof setUp>>;
  beforeAll(async () => {
    ctx = await setUp();
  });
  afterAll(() => ctx.app.close());

  it('enrols with a first valid code, shows 10 recovery codes once and stores neither the secret nor the codes in clear', async () => {
    const op = await createOperator(ctx.operators, 'enrol@acme.test');
    const browser = new Browser(ctx.app, '198.51.100.1');
    expect((await browser.login(op.email, PASSWORD)).status).toBe(200);
    const started = (await browser.call('POST', '/mfa/enrolment')).json();
    expect(started.otpauthUri).toMatch(/^otpauth:\/\/totp\/Tessera:enrol%40acme\.test\?secret=[A-Z2-7]{32}&issuer=Tessera/);
    const secret = base32Decode(started.secret) as Buffer;
    const wrong = await browser.call('POST', '/mfa/enrolment/confirm', {
      code: String((Number(codeAt(secret)) + 1) % 1e6).padStart(6, '0'),
    });
    expect(wrong.status).toBe(401);
    expect(wrong.json().error.code).toBe('mfa_code_invalid');
    expect((await browser.call('GET', '/session')).json().operator.mfaEnabled).toBe(false);

    const confirmed = await browser.call('POST', '/mfa/enrolment/confirm', { code: codeAt(secret) });
    expect(confirmed.status).toBe(200);
    const { recoveryCodes, operator } = confirmed.json();
    expect(recoveryCodes).toHaveLength(10);
    expect(operator).toMatchObject({ mfaEnabled: true, recoveryCodesLeft: 10 });
    expect(browser.cookies.has('tessera_admin_device')).toBe(true);
    const stored = JSON.stringify(await ctx.operators.get(op.id));
    expect(stored).not.toContain(started.secret);
    expect(stored).not.toContain(secret.toString('base64url'));
    expect(stored).not.toContain(secret.toString('hex'));
    for (const code of recoveryCodes) expect(stored).not.toContain(code);
    // Enrolled: a second set-up is refused (a platform administrator resets it with the CLI).
    expect((await browser.call('POST', '/mfa/enrolment')).json().error.code).toBe('mfa_already_enabled');
  });

  it('asks for the code after the right password, refuses a wrong code and the same code twice', async () => {
    const op = await createOperator(ctx.operators, 'code@acme.test');
    const { secret } = await enrol(new Browser(ctx.app, '198.51.100.2'), op.email);
    nextStep();
    const browser = new Browser(ctx.app, '198.51.100.3');
    const noCode = await browser.login(op.email, PASSWORD);
    expect(noCode.status).toBe(401);
    expect(noCode.json().error.code).toBe('mfa_code_required');
    expect(noCode.headers['set-cookie']).toBeUndefined();
    const wrongCode = await browser.login(op.email, PASSWORD, { code: '000000' === codeAt(secret) ? '111111' : '000000' });
    expect(wrongCode.json().error.code).toBe('mfa_code_invalid');
    // A wrong password with the right code is still a wrong password.
    expect((await browser.login(op.email, 'not-the-password', { code: codeAt(secret) })).json().error.code).toBe('login_failed');
    const code = codeAt(secret);
    expect((await browser.login(op.email, PASSWORD, { code })).status).toBe(200);
    const replay = await new Browser(ctx.app, '198.51.100.4').login(op.email, PASSWORD, { code });
    expect(replay.status).toBe(401);
    expect(replay.json().error.code).toBe('mfa_code_invalid');
    // Nor the previous step's code once a newer one was used.
    expect((await new Browser(ctx.app, '198.51.100.4').login(op.email, PASSWORD, { code: codeAt(secret, -1) })).status).toBe(401);
  });

  it('accepts each recovery code once', async () => {
    const op = await createOperator(ctx.operators, 'recovery@acme.test');
    const { recoveryCodes } = await enrol(new Browser(ctx.app, '198.51.100.5'), op.email);
    const [first, second] = recoveryCodes as [string, string];
    const used = await new Browser(ctx.app, '198.51.100.6').login(op.email, PASSWORD, { recoveryCode: first.toUpperCase() });
    expect(used.status).toBe(200);
    expect(used.json().operator.recoveryCodesLeft).toBe(9);
    const again = await new Browser(ctx.app, '198.51.100.6').login(op.email, PASSWORD, { recoveryCode: first });
    expect(again.status).toBe(401);
    expect(again.json().error.code).toBe('mfa_code_invalid');
    expect((await new Browser(ctx.app, '198.51.100.6').login(op.email, PASSWORD, { recoveryCode: second })).status).toBe(200);
  });

  it('ends every session of an operator when the second factor or the password changes', async () => {
    const op = await createOperator(ctx.operators, 'sessions@acme.test');
    const laptop = new Browser(ctx.app, '198.51.100.7');
    const phone = new Browser(ctx.app, '198.51.100.8');
    expect((await laptop.login(op.email, PASSWORD)).status).toBe(200);
    const { secret } = await enrol(phone, op.email);
    // The enrolling browser got a new session; the other one ended with the change.
    expect((await phone.call('GET', '/session')).status).toBe(200);
    expect((await laptop.call('GET', '/session')).status).toBe(401);
    nextStep();
    expect((await laptop.login(op.email, PASSWORD, { code: codeAt(secret) })).status).toBe(200);

    await ctx.operators.update(op.id, { passwordHash: await hashPassword('a-new-password-2'), credentialsChanged: true });
    for (const browser of [laptop, phone]) {
      const res = await browser.call('GET', '/session');
      expect(res.status).toBe(401);
      expect(res.json().error.code).toBe('admin_session_required');
    }
  });

  it('re-hashes a password stored at the old scrypt cost on the next sign-in', async () => {
    const salt = crypto.randomBytes(16);
    const key = crypto.scryptSync(PASSWORD, salt, 32, { N: 32768, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
    const op = await createOperator(
      ctx.operators,
      'old-hash@acme.test',
      ['scrypt', 32768, 8, 1, salt.toString('base64url'), key.toString('base64url')].join('$'),
    );
    const browser = new Browser(ctx.app, '198.51.100.9');
    expect((await browser.login(op.email, PASSWORD)).status).toBe(200);
    const stored = (await ctx.operators.get(op.id))?.passwordHash ?? '';
    expect(stored).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(await verifyPassword(PASSWORD, stored)).toBe(true);
    // A re-hash is not a credentials change: the session goes on.
    expect((await browser.call('GET', '/session')).status).toBe(200);
  });
});

describe('sign-in lockout (PCI DSS 8.3.4)', () => {
  let ctx: Awaited<ReturnType<typeof setUp>>;
  beforeAll(async () => {
    ctx = await setUp();
  });
  afterAll(() => ctx.app.close());

  it('blocks a failing source for the account before the account locks, and the operator elsewhere still signs in', async () => {
    const op = await createOperator(ctx.operators, 'source@acme.test');
    const attacker = new Browser(ctx.app, '203.0.113.66');
    for (let i = 0; i < 5; i++) expect((await attacker.login(op.email, `guess-number-${i}`)).status).toBe(401);
    const blocked = await attacker.login(op.email, PASSWORD);
    expect(blocked.status).toBe(429);
    expect(blocked.json().error.code).toBe('rate_limited');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThanOrEqual(1700);
    // The account is not locked: the operator, from anywhere else, signs in.
    const ok = await new Browser(ctx.app, '198.51.100.20').login(op.email, PASSWORD);
    expect(ok.status).toBe(200);
  });

  it('locks the account after 10 failures for 30 minutes, even for the right password, but not for a trusted device', async () => {
    const op = await createOperator(ctx.operators, 'locked@acme.test');
    const operatorBrowser = new Browser(ctx.app, '198.51.100.30');
    const { secret } = await enrol(operatorBrowser, op.email);
    // Two attacker addresses, five failures each: neither alone could lock the account.
    for (const ip of ['203.0.113.1', '203.0.113.2'])
      for (let i = 0; i < 5; i++) expect((await new Browser(ctx.app, ip).login(op.email, `guess-${ip}-${i}`)).status).toBe(401);
    nextStep();
    const elsewhere = await new Browser(ctx.app, '198.51.100.31').login(op.email, PASSWORD, { code: codeAt(secret) });
    expect(elsewhere.status).toBe(429);
    expect(Number(elsewhere.headers['retry-after'])).toBeGreaterThanOrEqual(1700);
    // Refused before the password is checked: more attempts do not extend the lock or count.
    expect((await new Browser(ctx.app, '203.0.113.3').login(op.email, PASSWORD)).status).toBe(429);

    // The operator's own browser signed in with the second factor before: the lock does not apply to it.
    const trusted = await operatorBrowser.login(op.email, PASSWORD, { code: codeAt(secret) });
    expect(trusted.status).toBe(200);
    // The trusted-device token is worth nothing to another operator or once copied without the password and code.
    const copied = new Browser(ctx.app, '203.0.113.4');
    copied.cookies.set('tessera_admin_device', operatorBrowser.cookies.get('tessera_admin_device') ?? '');
    expect((await copied.login(op.email, 'a-guessed-password')).status).toBe(401);

    const audit = await ctx.deps.audit.list({ limit: 100 });
    expect(audit.some((e) => e.action === 'login.failed' && e.details.locked === 'account')).toBe(true);
    expect(audit.some((e) => e.action === 'login.throttled' && e.details.limit === 'account')).toBe(true);
  });
});

describe('second factor required (production)', () => {
  let ctx: Awaited<ReturnType<typeof setUp>>;
  beforeAll(async () => {
    ctx = await setUp({ mfaRequired: true });
  });
  afterAll(() => ctx.app.close());

  it('lets a password-only session set up the second factor and nothing else', async () => {
    const op = await createOperator(ctx.operators, 'first@acme.test');
    const browser = new Browser(ctx.app, '198.51.100.40');
    const first = await browser.login(op.email, PASSWORD);
    expect(first.json()).toMatchObject({ mfaRequired: true, mfaEnrolmentRequired: true });
    const refused = await browser.call('GET', '/keys?merchantId=acme');
    expect(refused.status).toBe(403);
    expect(refused.json().error.code).toBe('mfa_enrolment_required');
    const started = (await browser.call('POST', '/mfa/enrolment')).json();
    const confirmed = await browser.call('POST', '/mfa/enrolment/confirm', { code: codeAt(base32Decode(started.secret) as Buffer) });
    expect(confirmed.json()).toMatchObject({ mfaEnrolmentRequired: false });
    expect((await browser.call('GET', '/keys?merchantId=acme')).status).toBe(200);
  });
});

describe('API-key pepper rotation', () => {
  it('keeps the second factor working under an older pepper, and re-seals the secret under the newest', async () => {
    const before = await setUp();
    const op = await createOperator(before.operators, 'rotation@acme.test');
    const { secret, recoveryCodes } = await enrol(new Browser(before.app, '198.51.100.50'), op.email);
    await before.app.close();
    const sealedBefore = (await before.operators.get(op.id))?.mfa?.secret;

    const newPepper = 'a-new-pepper-of-at-least-32-characters-0001';
    const withoutOld = await setUp({ operators: before.operators, pepper: newPepper });
    nextStep();
    const refused = await new Browser(withoutOld.app, '198.51.100.51').login(op.email, PASSWORD, { code: codeAt(secret) });
    expect(refused.json().error.code).toBe('mfa_code_invalid');
    await withoutOld.app.close();

    const rotated = await setUp({ operators: before.operators, pepper: newPepper, previousPeppers: [TEST_PEPPER] });
    nextStep();
    expect((await new Browser(rotated.app, '198.51.100.52').login(op.email, PASSWORD, { code: codeAt(secret) })).status).toBe(200);
    expect((await before.operators.get(op.id))?.mfa?.secret).not.toBe(sealedBefore);
    expect((await new Browser(rotated.app, '198.51.100.52').login(op.email, PASSWORD, { recoveryCode: recoveryCodes[0] })).status).toBe(
      200,
    );
    await rotated.app.close();

    // Re-sealed: the newest pepper alone now opens it.
    const newestOnly = await setUp({ operators: before.operators, pepper: newPepper });
    nextStep();
    expect((await new Browser(newestOnly.app, '198.51.100.53').login(op.email, PASSWORD, { code: codeAt(secret) })).status).toBe(200);
    await newestOnly.app.close();
  });
});

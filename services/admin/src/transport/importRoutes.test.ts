import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { CARD_IMPORT_CREATE_QUEUE_KEY, CARD_IMPORT_QUEUE_KEY, cardImportKey, RedisAuditLog } from '@tessera/merchant-data';
import { newOperatorRecord } from '../domain/operators';
import { hashPassword } from '../domain/passwords';
import { base32Decode, totp } from '../domain/totp';
import { RedisCardImportRequests } from '../store/cardImportRequests';
import { RedisOperatorStore } from '../store/redisAdminStores';
import { anAdminDeps } from '../testing/fixtures';
import { useAdminRedis } from '../testing/redis';
import { startApp, type RunningApp } from '../../../../packages/edge/src/testing/http';
import { createAdminApp } from './adminRouter';

// One scrypt per sign-in, slow on a loaded machine.
jest.setTimeout(60_000);

const PASSWORD = 'operator-password-1';
const MiB = 1024 * 1024;
const MAX_UPLOAD = 3 * MiB;
const REPORT_KEY = '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nxjMEZ0merchant\n-----END PGP PUBLIC KEY BLOCK-----\n';

const db = useAdminRedis();
let app: RunningApp;
let audit: RedisAuditLog;
type Session = { cookie: string; csrf: string };
let acme: Session;
let globex: Session;
let withoutMfa: Session;

async function signIn(email: string, mfa: boolean): Promise<Session> {
  const res = await app.request('POST', '/admin/v1/login', {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  expect(res.status).toBe(200);
  const session = { cookie: (res.headers['set-cookie'] ?? [])[0]?.split(';')[0] ?? '', csrf: res.json().csrfToken as string };
  if (!mfa) return session;
  const started = await call('POST', '/mfa/enrolment', { as: session });
  expect(started.status).toBe(200);
  const code = totp(base32Decode(started.json().secret as string) as Buffer, Date.now());
  const confirmed = await call('POST', '/mfa/enrolment/confirm', { as: session, body: JSON.stringify({ code }) });
  expect(confirmed.status).toBe(200);
  // The session is renewed with the second factor: a new cookie and CSRF token.
  const renewed = (confirmed.headers['set-cookie'] ?? []).find((c) => c.startsWith(session.cookie.split('=')[0] + '='));
  return { cookie: renewed?.split(';')[0] ?? session.cookie, csrf: confirmed.json().csrfToken as string };
}

function call(method: string, path: string, opts: { as?: Session; body?: string | Buffer; type?: string } = {}) {
  const as = opts.as ?? acme;
  return app.request(method, `/admin/v1${path}`, {
    headers: {
      cookie: as.cookie,
      'x-csrf-token': as.csrf,
      ...(opts.body !== undefined ? { 'content-type': opts.type ?? 'application/json' } : {}),
    },
    ...(opts.body !== undefined ? { body: opts.body } : {}),
  });
}

const create = (merchantId = 'acme', as = acme, body: Record<string, unknown> = {}) =>
  call('POST', `/merchants/${merchantId}/imports`, {
    as,
    body: JSON.stringify({ mode: 'live', format: 'jsonl', reportRecipientKey: REPORT_KEY, ...body }),
  });

/** What a vault's creation worker does once it made the key pair (services/vault, importCreations.ts). */
async function vaultAnswers(id: string): Promise<void> {
  await db.redis
    .multi()
    .set(cardImportKey(id, 'key'), '{"sealed":"private key"}')
    .hset(cardImportKey(id, 'meta'), {
      publicKey: '-----BEGIN PGP PUBLIC KEY BLOCK-----\nimport\n',
      publicKeyFingerprint: 'ab12',
      state: 'awaiting_upload',
    })
    .srem(CARD_IMPORT_CREATE_QUEUE_KEY, id)
    .exec();
}

async function readyImport(): Promise<string> {
  const created = await create();
  expect(created.status).toBe(202);
  await vaultAnswers(created.json().id);
  return created.json().id as string;
}

const upload = (id: string, body: Buffer, type = 'application/pgp-encrypted', as = acme) =>
  call('PUT', `/imports/${id}/file`, { as, body, type });

const actions = async (): Promise<string[]> => (await audit.list({ limit: 100 })).map((r) => `${r.action} ${String(r.details.importId)}`);

beforeAll(async () => {
  const operators = new RedisOperatorStore(db.redis);
  for (const [email, merchantId] of [
    ['ops@acme.test', 'acme'],
    ['ops@globex.test', 'globex'],
    ['platform@tessera.test', null],
  ] as const) {
    await operators.create(newOperatorRecord({ email, passwordHash: await hashPassword(PASSWORD), merchantId, now: new Date() }));
  }
  audit = new RedisAuditLog(db.redis, 1000);
  app = await startApp(
    createAdminApp(
      anAdminDeps(db.redis, {
        operators,
        audit,
        cardImports: { imports: new RedisCardImportRequests(db.redis), maxUploadBytes: MAX_UPLOAD },
      }),
    ),
  );
  acme = await signIn('ops@acme.test', true);
  globex = await signIn('ops@globex.test', true);
  withoutMfa = await signIn('platform@tessera.test', false);
});

afterAll(async () => {
  await app.close();
});

describe('POST /admin/v1/merchants/{merchantId}/imports', () => {
  it('answers 202 with the import in state creating, asks a vault for its key through Redis, and audits it', async () => {
    const res = await create();
    expect(res.status).toBe(202);
    const id = res.json().id as string;
    expect(res.json()).toMatchObject({ merchantId: 'acme', mode: 'live', format: 'jsonl', status: 'creating', publicKey: null });
    expect(res.body.toString()).not.toContain('BEGIN PGP');
    expect(await db.redis.sismember(CARD_IMPORT_CREATE_QUEUE_KEY, id)).toBe(1);
    expect(await db.redis.hget(cardImportKey(id, 'meta'), 'reportRecipientKey')).toBe(REPORT_KEY);
    expect(await actions()).toContain(`import.created ${id}`);
    const shown = await call('GET', `/imports/${id}`);
    expect(shown.json()).toMatchObject({ id, status: 'creating', publicKey: null });
  });

  it('shows the public key and awaiting_upload once a vault made the key pair', async () => {
    const id = await readyImport();
    const shown = await call('GET', `/imports/${id}`);
    expect(shown.status).toBe(200);
    expect(shown.json()).toMatchObject({
      status: 'awaiting_upload',
      publicKey: expect.stringContaining('BEGIN PGP PUBLIC KEY BLOCK'),
      publicKeyFingerprint: 'ab12',
    });
    expect(shown.body.toString()).not.toContain('sealed');
  });

  it("refuses another merchant's operator (403 on create, 404 on the import) and an operator without a second factor", async () => {
    expect((await create('acme', globex)).json().error.code).toBe('merchant_forbidden');
    const id = await readyImport();
    for (const [method, path] of [
      ['GET', `/imports/${id}`],
      ['GET', `/imports/${id}/report`],
    ] as const) {
      const res = await call(method, path, { as: globex });
      expect({ path, status: res.status, code: res.json().error.code }).toEqual({ path, status: 404, code: 'import_not_found' });
    }
    expect((await upload(id, Buffer.from('x'), undefined, globex)).json().error.code).toBe('import_not_found');
    const noMfa = await create('acme', withoutMfa);
    expect({ status: noMfa.status, code: noMfa.json().error.code }).toEqual({ status: 403, code: 'second_factor_required' });
    expect((await upload(id, Buffer.from('x'), undefined, withoutMfa)).json().error.code).toBe('second_factor_required');
    // A platform operator sees any merchant's import.
    expect((await call('GET', `/imports/${id}`, { as: withoutMfa })).status).toBe(200);
  });

  it('answers bad input with a 400 naming the field, never a 500', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ mode: 'production' }, 'mode'],
      [{ format: 'xml' }, 'format'],
      [{ reportRecipientKey: 'not a key' }, 'reportRecipientKey'],
      [{ keyType: 'dsa' }, 'keyType'],
      [{ extra: 1 }, 'extra'],
    ];
    for (const [body, param] of cases) {
      const res = await create('acme', acme, body);
      expect({ param, status: res.status, got: res.json().error.param }).toEqual({ param, status: 400, got: param });
    }
    expect((await call('GET', '/imports/imp_nope')).status).toBe(404);
  });
});

describe('PUT /admin/v1/imports/{importId}/file', () => {
  it('stores the file in 1 MiB chunks in the layout the vault reads, queues the import and audits the upload', async () => {
    const id = await readyImport();
    const file = randomBytes(2 * MiB + 1234);
    const res = await upload(id, file, 'application/octet-stream');
    expect(res.status).toBe(202);
    expect(res.json()).toMatchObject({ id, status: 'queued', uploadedBytes: file.length });
    const chunks = await db.redis.lrangeBuffer(cardImportKey(id, 'upload'), 0, -1);
    expect(chunks.map((c) => c.length)).toEqual([MiB, MiB, 1234]);
    expect(Buffer.concat(chunks).equals(file)).toBe(true);
    expect(await db.redis.hget(cardImportKey(id, 'meta'), 'uploadChunks')).toBe('3');
    expect(await db.redis.sismember(CARD_IMPORT_QUEUE_KEY, id)).toBe(1);
    expect(await actions()).toContain(`import.uploaded ${id}`);
    // Once queued, no second file.
    const again = await upload(id, file);
    expect({ status: again.status, code: again.json().error.code }).toEqual({ status: 409, code: 'import_not_ready' });
  });

  it('writes chunks to Redis while the body is still arriving (no whole-body buffering)', async () => {
    const id = await readyImport();
    const req = http.request({
      host: '127.0.0.1',
      port: app.port,
      method: 'PUT',
      path: `/admin/v1/imports/${id}/file`,
      headers: { cookie: acme.cookie, 'x-csrf-token': acme.csrf, 'content-type': 'application/pgp-encrypted' },
    });
    const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
      req.on('response', (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString() }));
      });
      req.on('error', reject);
    });
    req.write(randomBytes(MiB + 10));
    // The first chunk is in Redis before the client has sent the rest.
    while ((await db.redis.llen(cardImportKey(id, 'upload'))) < 1) await new Promise((r) => setTimeout(r, 20));
    req.end(randomBytes(10));
    const res = await answered;
    expect(res.status).toBe(202);
    expect(JSON.parse(res.body)).toMatchObject({ status: 'queued', uploadedBytes: MiB + 20 });
  });

  it('refuses a file over IMPORT_UPLOAD_MAX_BYTES with 413 and keeps nothing of it; another media type with 415; an early upload with 409', async () => {
    const early = await create();
    const tooEarly = await upload(early.json().id, Buffer.from('x'));
    expect({ status: tooEarly.status, code: tooEarly.json().error.code }).toEqual({ status: 409, code: 'import_not_ready' });

    const id = await readyImport();
    const big = await upload(id, randomBytes(MAX_UPLOAD + 1));
    expect({ status: big.status, code: big.json().error.code }).toEqual({ status: 413, code: 'body_too_large' });
    expect(await db.redis.exists(cardImportKey(id, 'upload'))).toBe(0);
    const json = await upload(id, Buffer.from('{}'), 'application/json');
    expect({ status: json.status, code: json.json().error.code }).toEqual({ status: 415, code: 'unsupported_media_type' });
    const empty = await upload(id, Buffer.alloc(0));
    expect(empty.status).toBe(400);
    // Still waiting for its file: a good upload goes through.
    expect((await upload(id, Buffer.from('ciphertext'))).status).toBe(202);
  });
});

describe('GET /admin/v1/imports/{importId}/report', () => {
  it('answers 409 until the import is done, then the report ciphertext as application/pgp-encrypted, audited', async () => {
    const id = await readyImport();
    const early = await call('GET', `/imports/${id}/report`);
    expect({ status: early.status, code: early.json().error.code }).toEqual({ status: 409, code: 'import_not_ready' });
    // What the vault leaves when an import is done: the report in chunks, the key gone.
    const parts = [randomBytes(MiB), randomBytes(77)];
    await db.redis
      .multi()
      .rpush(cardImportKey(id, 'report'), ...parts)
      .hset(cardImportKey(id, 'meta'), { state: 'done', reportChunks: '2', processed: '5', imported: '4', failed: '1', records: '5' })
      .del(cardImportKey(id, 'key'))
      .exec();
    const shown = (await call('GET', `/imports/${id}`)).json();
    expect(shown).toMatchObject({
      status: 'done',
      reportReady: true,
      counts: { records: 5, processed: 5, imported: 4, duplicates: 0, failed: 1 },
    });
    const res = await call('GET', `/imports/${id}/report`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/pgp-encrypted');
    expect(res.body.equals(Buffer.concat(parts))).toBe(true);
    expect(await actions()).toContain(`import.report_downloaded ${id}`);
    const denied = await call('GET', `/imports/${id}/report`, { as: withoutMfa });
    expect(denied.json().error.code).toBe('second_factor_required');
  });
});

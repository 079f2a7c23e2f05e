/**
 * @jest-environment ./packages/test-support/src/softHsmEnvironment.js
 */
/**
 * The vault with its key-encryption keys in an HSM (SoftHSM2 over PKCS#11), end to end with the
 * real processes: tokenize, proxy, rotate inside the HSM, and rewrap VAULT_KEYS -> HSM -> VAULT_KEYS.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Redis } from 'ioredis';
import * as pkcs11js from 'pkcs11js';
import { callUnary, createVaultClient } from '@tessera/protos';
import { ckrNameOf, createSoftHsmToken, type SoftHsmToken } from '@tessera/test-support/softHsm';
import { aCard, apiClient, ROOT, TEST_CARDS, useStack, type ApiKey } from './harness';
import { parseCard } from '../../services/vault/src/store/records';

jest.setTimeout(120_000);

const envKey = `e1:${randomBytes(32).toString('base64')}`;
let hsm: SoftHsmToken;
const stackEnv: Record<string, string> = {};

// Declared before useStack so the token and its first key exist when the vault starts.
beforeAll(() => {
  hsm = createSoftHsmToken('tessera-it');
  hsm.createKek('kek-2026-a');
  // The vault starts on VAULT_KEYS, with the HSM key readable: the state before a migration into the HSM.
  Object.assign(stackEnv, hsm.vaultEnv(), { VAULT_KEYS: envKey, VAULT_KEK_PROVIDER: 'env', PKCS11_KEYS: 'h1:kek-2026-a' });
});

const env = useStack({ psp: true, env: stackEnv });

afterAll(() => hsm?.remove());

let key: ApiKey;
let call: ReturnType<typeof apiClient>;
let redis: Redis;
/** The merchant keys are the vault's: only its Redis user may read them when ACL users are on (here they are not). */
let vaultRedis: Redis;

beforeAll(async () => {
  key = env.stack.createKey('acme', 'test');
  call = apiClient(env.stack, key.apiKey);
  redis = new Redis(env.redis.url, { lazyConnect: true });
  await redis.connect();
  vaultRedis = redis;
});

afterAll(async () => {
  await redis?.quit();
});

/**
 * Which root KEK protects a stored card: its data key is wrapped under acme's merchant key (issue
 * 29), and that key under a root KEK, named in the merchant key's record.
 */
async function keyIdOf(token: string): Promise<string> {
  const raw = await redis.getBuffer(`tessera:card:{${token}}`);
  if (raw === null) throw new Error('no such record');
  const recordKeyId = parseCard(raw).sealed.keyId;
  const merchantKey = await vaultRedis.get('tessera:card:kek:{m:acme}:test');
  if (merchantKey === null || JSON.parse(merchantKey).kekId !== recordKeyId) return recordKeyId;
  return (JSON.parse(merchantKey) as { keyId: string }).keyId;
}

async function restartVault(changes: Record<string, string | undefined>): Promise<void> {
  await env.stack.vault.stop();
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined) delete env.stack.env[name];
    else env.stack.env[name] = value;
  }
  await env.stack.startVault();
  // The gateway and the proxy reconnect to the new vault with their own backoff.
  for (let i = 0; i < 100 && (await call('GET', '/readyz')).status !== 200; i++) await new Promise((r) => setTimeout(r, 100));
}

function vaultCli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [path.join(ROOT, 'services/vault/dist/cli/vault.js'), ...args], {
    cwd: ROOT,
    env: env.stack.env,
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

async function tokenize(number: string): Promise<string> {
  const created = await call('POST', '/v1/token', aCard({ number, cvv: number.startsWith('37') ? '0461' : '046' }));
  expect(created.status).toBe(201);
  return (created.body as { token: string }).token;
}

/** The forward proxy's CA of `merchantId` (GetCaCertificate; this stack's vault runs without TLS, so any caller may). */
async function caPemOf(merchantId: string): Promise<string> {
  const client = createVaultClient(env.stack.env.VAULT_ADDR as string);
  try {
    const answer = await callUnary<unknown, { certificatePem: string }>(
      client,
      client.getCaCertificate as never,
      { merchantId },
      { timeoutMs: 5000 },
    );
    return answer.certificatePem;
  } finally {
    client.close();
  }
}

/** Proxies the card number of `token` to the recording PSP and returns what the PSP received. */
async function numberAtPsp(token: string): Promise<string> {
  env.psp.reset();
  const res = await call('POST', '/v1/proxy', {
    method: 'post',
    token,
    pspUrl: `${env.psp.url}/charge`,
    pspHeaders: { 'content-type': 'application/json' },
    pspBody: '{"pan":"[CARD_NUMBER]"}',
  });
  expect(res.status).toBe(200);
  return (JSON.parse(env.psp.requests[0]?.body.toString('utf8') ?? '{}') as { pan: string }).pan;
}

describe('the key-encryption key in an HSM (SoftHSM2)', () => {
  const tokens = { visa: '', mastercard: '', amex: '', declined: '' };

  it('moves from VAULT_KEYS into the HSM: new cards are wrapped in the HSM, old ones still render, rewrap moves them', async () => {
    tokens.visa = await tokenize(TEST_CARDS.visa);
    expect(await keyIdOf(tokens.visa)).toBe('e1');
    // The forward proxy's CA key is sealed like a record: under e1 now, moved into the HSM by rewrap.
    const caPem = await caPemOf('acme');

    await restartVault({ VAULT_KEK_PROVIDER: 'pkcs11' });
    expect(env.stack.vault.output).toContain('"provider":"pkcs11"');
    tokens.mastercard = await tokenize(TEST_CARDS.mastercard);
    // Under acme's merchant key, still wrapped under e1 until rewrap moves that key into the HSM's keeping.
    expect(await keyIdOf(tokens.mastercard)).toBe('e1');
    expect(await numberAtPsp(tokens.visa)).toBe(TEST_CARDS.visa);
    expect(await numberAtPsp(tokens.mastercard)).toBe(TEST_CARDS.mastercard);

    const rewrap = vaultCli(['rewrap']);
    expect(rewrap.status).toBe(0);
    expect(JSON.parse(rewrap.stdout)).toMatchObject({
      done: true,
      targetKeyId: 'h1',
      failed: 0,
      merchantKeksRewrapped: 1,
      alreadyCurrent: 4,
    });
    // The fingerprint key moves with the records (made under e1 by the first tokenize).
    expect(JSON.parse(rewrap.stdout)).toMatchObject({ fingerprintKey: 'rewrapped', caKeys: { rewrapped: 1, failed: 0 } });
    expect(await keyIdOf(tokens.visa)).toBe('h1');
    expect(await keyIdOf(tokens.mastercard)).toBe('h1');
    const status = vaultCli(['status', '--json']);
    expect(status.status).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      currentKeyId: 'h1',
      providers: { e1: 'env', h1: 'pkcs11' },
      byKeyId: {},
      underMerchantKeys: { card: 2, cvv: 2 },
      merchantKeksByKeyId: { h1: 1 },
      fingerprintKeyKekId: 'h1',
      caKeys: { byKeyId: { h1: 1 }, unreadable: 0 },
    });
    expect(await numberAtPsp(tokens.visa)).toBe(TEST_CARDS.visa);
    // A vault with only the HSM's keys still opens the same CA (the one running may hold it in memory).
    await restartVault({ VAULT_KEYS: undefined });
    expect(await caPemOf('acme')).toBe(caPem);
    await restartVault({ VAULT_KEYS: envKey });
  });

  it('rotates inside the HSM: the CLI generates a second key there, and after a redeploy new cards use it', async () => {
    const rotate = vaultCli(['rotate', '--kid', 'h2', '--label', 'kek-2026-b']);
    expect(rotate.status).toBe(0);
    expect(rotate.stdout.trim()).toBe('h2:kek-2026-b');
    // Running it again cannot make a second key under the same label.
    expect(vaultCli(['rotate', '--kid', 'h3', '--label', 'kek-2026-b']).stderr).toContain('already holds a key labelled "kek-2026-b"');

    await restartVault({ PKCS11_KEYS: `h1:kek-2026-a,${rotate.stdout.trim()}` });
    tokens.amex = await tokenize(TEST_CARDS.amex);
    expect(await keyIdOf(tokens.amex)).toBe('h1');
    expect(await numberAtPsp(tokens.amex)).toBe(TEST_CARDS.amex);
    expect(await numberAtPsp(tokens.visa)).toBe(TEST_CARDS.visa);

    expect(JSON.parse(vaultCli(['rewrap']).stdout)).toMatchObject({ done: true, targetKeyId: 'h2', failed: 0 });
    for (const token of [tokens.visa, tokens.mastercard, tokens.amex]) expect(await keyIdOf(token)).toBe('h2');
  });

  it('moves back out of the HSM: with VAULT_KEYS current, rewrap takes every record off the HSM keys', async () => {
    await restartVault({ VAULT_KEK_PROVIDER: 'env' });
    tokens.declined = await tokenize(TEST_CARDS.visaDeclined);
    expect(await keyIdOf(tokens.declined)).toBe('h2');

    expect(JSON.parse(vaultCli(['rewrap']).stdout)).toMatchObject({ done: true, targetKeyId: 'e1', failed: 0 });
    for (const token of Object.values(tokens)) expect(await keyIdOf(token)).toBe('e1');

    // Nothing needs the HSM any more: a vault without it renders every card.
    await restartVault({ PKCS11_KEYS: undefined, PKCS11_MODULE: undefined, PKCS11_TOKEN_LABEL: undefined, PKCS11_PIN: undefined });
    expect(await numberAtPsp(tokens.visa)).toBe(TEST_CARDS.visa);
    expect(await numberAtPsp(tokens.amex)).toBe(TEST_CARDS.amex);
    // VAULT_KEYS -> HSM -> VAULT_KEYS, and the same card still has the same fingerprint.
    const fingerprint = (await call('GET', `/v1/token/${tokens.visa}`)).body.fingerprint as string;
    expect(fingerprint).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect((await call('POST', '/v1/token', aCard({ number: TEST_CARDS.visa }))).body.fingerprint).toBe(fingerprint);
  });

  it('keeps every key-encryption key inside the HSM: CKA_VALUE cannot be read, and they are marked non-extractable', () => {
    const found = hsm.withSession((lib, session) =>
      ['kek-2026-a', 'kek-2026-b'].map((label) => {
        lib.C_FindObjectsInit(session, [{ type: pkcs11js.CKA_LABEL, value: label }]);
        const [handle] = lib.C_FindObjects(session, 1);
        lib.C_FindObjectsFinal(session);
        if (handle === undefined) throw new Error(`${label} is missing`);
        const [extractable] = lib.C_GetAttributeValue(session, handle, [{ type: pkcs11js.CKA_EXTRACTABLE }]);
        return {
          label,
          value: ckrNameOf(() => lib.C_GetAttributeValue(session, handle, [{ type: pkcs11js.CKA_VALUE }])),
          extractable: (extractable?.value as Buffer | undefined)?.[0],
        };
      }),
    );
    expect(found).toEqual([
      { label: 'kek-2026-a', value: 'CKR_ATTRIBUTE_SENSITIVE', extractable: 0 },
      { label: 'kek-2026-b', value: 'CKR_ATTRIBUTE_SENSITIVE', extractable: 0 },
    ]);
  });

  it('never writes the PIN or a card number to any log', () => {
    const logs = env.stack.logs();
    expect(logs).not.toContain(hsm.pin);
    for (const pan of Object.values(TEST_CARDS)) expect(logs).not.toContain(pan);
  });
});

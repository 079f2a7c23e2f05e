/**
 * Issue 29's round trip (docs/migration.md, "Leaving Tessera (export)"), through real processes and
 * the shipped Redis ACL users: a merchant's cards come in as a PGP file through the vault's import
 * CLI, then leave again to another party's PGP key: one platform operator registers that key and
 * requests the export, another approves it (both with a second factor), the vault writes the file,
 * and the admin API and `npm run exports` hand out the ciphertext. Decrypted with the recipient's
 * key it holds exactly the imported cards. An unregistered recipient is refused, the requester
 * cannot approve, the day's limit holds, and no card number reaches a log, the audit or an answer.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isLuhnValid } from '@tessera/common';
import { ROOT } from '@tessera/stack';
import { AdminClient } from './adminClient';
import { useStack, waitUntil } from './harness';
import { base32Decode, hotp, totpStep } from '../../services/admin/src/domain/totp';
import { openpgp } from '../../services/vault/src/domain/openpgp';
import { createRecordParser } from '../../services/vault/src/domain/importFormats';

jest.setTimeout(180_000);

const MERCHANT = 'leaving-shop';
const FIRST = { email: 'export-first@tessera.test', password: 'export-first-password-1' };
const SECOND = { email: 'export-second@tessera.test', password: 'export-second-password-2' };

const env = useStack({
  redis: { acl: true },
  env: { TRUSTED_PROXIES: '127.0.0.1/32' },
  serviceEnv: { vault: { IMPORT_POLL_INTERVAL_MS: '200' }, admin: { EXPORT_MAX_PER_MERCHANT_PER_DAY: '2' } },
});

function luhnDigit(partial: string): string {
  for (let d = 0; d <= 9; d++) if (isLuhnValid(partial + d)) return String(d);
  throw new Error('no Luhn digit');
}

/** Test BIN 424242 (never a real card), imported into live mode as the import's tests do. */
const cardNumber = (i: number): string => {
  const partial = `424242${String(i).padStart(9, '0')}`;
  return partial + luhnDigit(partial);
};

interface Card {
  number: string;
  expiryMonth: number;
  expiryYear: number;
  holderName: string;
}

const YEAR = new Date().getUTCFullYear() + 4;
const CARDS: Card[] = [
  { number: cardNumber(1), expiryMonth: 1, expiryYear: YEAR, holderName: 'Ada Lovelace' },
  { number: cardNumber(2), expiryMonth: 12, expiryYear: YEAR + 1, holderName: 'O"Brien, Zoë' },
  { number: cardNumber(3), expiryMonth: 6, expiryYear: YEAR, holderName: '' },
  { number: cardNumber(4), expiryMonth: 9, expiryYear: YEAR + 2, holderName: 'Grace Hopper' },
  { number: cardNumber(5), expiryMonth: 3, expiryYear: YEAR, holderName: 'Edsger Dijkstra' },
];

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-export-'));
  env.stack.createOperator(FIRST.email, FIRST.password, null);
  env.stack.createOperator(SECOND.email, SECOND.password, null);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function cli(script: string, redisUrl: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [path.join(ROOT, script), ...args], {
    cwd: ROOT,
    env: { ...env.stack.env, REDIS_URL: redisUrl },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}
const vaultCli = (...args: string[]) => cli('services/vault/dist/cli/vault.js', env.redis.users?.vault as string, ...args);
const exportsCli = (...args: string[]) => cli('services/admin/dist/cli/exports.js', env.redis.users?.admin as string, ...args);

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

/** The old provider's side: a CSV file of the cards, encrypted to the import's key. */
async function importCards(): Promise<void> {
  const merchantKey = await openpgp.generateKey({ type: 'ecc', curve: 'curve25519Legacy', userIDs: [{ name: 'leaving shop' }] });
  fs.writeFileSync(path.join(dir, 'merchant.asc'), merchantKey.publicKey);
  const created = vaultCli(
    'import',
    'create',
    '--merchant',
    MERCHANT,
    '--mode',
    'live',
    '--format',
    'csv',
    '--report-key',
    path.join(dir, 'merchant.asc'),
    '--json',
  );
  expect(created.stderr).toBe('');
  const { id, publicKey } = JSON.parse(created.stdout) as { id: string; publicKey: string };
  const quote = (v: string) => (/[",]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  const csv =
    'id,number,expiry_month,expiry_year,holder_name\n' +
    CARDS.map((c, i) => `old_${i},${c.number},${c.expiryMonth},${c.expiryYear},${quote(c.holderName)}\n`).join('');
  const encrypted = await openpgp.encrypt({
    message: await openpgp.createMessage({ binary: Buffer.from(csv) }),
    encryptionKeys: await openpgp.readKey({ armoredKey: publicKey }),
    format: 'binary',
  });
  fs.writeFileSync(path.join(dir, 'cards.csv.pgp'), encrypted as Uint8Array);
  expect(vaultCli('import', 'upload', id, path.join(dir, 'cards.csv.pgp')).status).toBe(0);
  const finished = vaultCli('import', 'status', id, '--wait', '--json');
  expect(finished.status).toBe(0);
  expect(JSON.parse(finished.stdout)).toMatchObject({ state: 'done', imported: CARDS.length, failed: 0 });
}

async function decryptWith(privateKey: string, file: Uint8Array): Promise<string> {
  const { data } = await openpgp.decrypt({
    message: await openpgp.readMessage({ binaryMessage: file }),
    decryptionKeys: await openpgp.readPrivateKey({ armoredKey: privateKey }),
    format: 'utf8',
  });
  return data as string;
}

function cardsIn(format: 'jsonl' | 'csv' | 'stripe', text: string): Array<Card & { id: string }> {
  const parser = createRecordParser(format);
  return text.split('\n').flatMap((line) => {
    const parsed = parser.parse(line);
    if (parsed === null) return [];
    if (!parsed.ok) throw new Error(`the export holds an unreadable record: ${parsed.reason}`);
    const { oldId, ...card } = parsed.card;
    return [{ id: oldId, ...card }];
  });
}

const byNumber = (a: Card, b: Card): number => a.number.localeCompare(b.number);

test('cards imported from one PGP file leave, approved by two operators, as a PGP file that holds exactly those cards', async () => {
  await importCards();
  const recipient = await openpgp.generateKey({ type: 'ecc', curve: 'curve25519Legacy', userIDs: [{ name: 'next vault' }] });
  const stranger = await openpgp.generateKey({ type: 'ecc', curve: 'curve25519Legacy', userIDs: [{ name: 'stranger' }] });
  const recipientFingerprint = (await openpgp.readKey({ armoredKey: recipient.publicKey })).getFingerprint().toUpperCase();
  const strangerFingerprint = (await openpgp.readKey({ armoredKey: stranger.publicKey })).getFingerprint().toUpperCase();

  const first = await operatorWithMfa(FIRST, '198.18.2.1');
  const second = await operatorWithMfa(SECOND, '198.18.2.2');

  // The recipient's key, registered with its fingerprint shown; a private key is refused.
  const refusedKey = await first.call('POST', `/merchants/${MERCHANT}/export-recipients`, {
    label: 'oops',
    publicKey: recipient.privateKey,
  });
  expect([refusedKey.status, refusedKey.body.error.code]).toEqual([400, 'export_recipient_key_invalid']);
  const registered = await first.call('POST', `/merchants/${MERCHANT}/export-recipients`, {
    label: 'Next vault, migration team',
    publicKey: recipient.publicKey,
  });
  expect(registered.status).toBe(201);
  expect(registered.body).toMatchObject({ fingerprint: recipientFingerprint, label: 'Next vault, migration team' });
  const listed = await second.call('GET', `/merchants/${MERCHANT}/export-recipients`);
  expect(listed.body.recipients.map((r: { fingerprint: string }) => r.fingerprint)).toEqual([recipientFingerprint]);

  // A recipient nobody registered is refused, before any order exists.
  const unregistered = await first.call('POST', `/merchants/${MERCHANT}/export-requests`, {
    mode: 'live',
    format: 'jsonl',
    recipient: strangerFingerprint,
    reason: 'moving to another vault',
  });
  expect([unregistered.status, unregistered.body.error.code]).toEqual([422, 'export_recipient_not_registered']);

  const requested = await first.call('POST', `/merchants/${MERCHANT}/export-requests`, {
    mode: 'live',
    format: 'jsonl',
    recipient: recipientFingerprint,
    reason: 'moving to another vault',
  });
  expect(requested.status).toBe(201);
  const orderId = requested.body.id as string;
  // The requester cannot approve it; nothing is written until someone else does.
  const selfApproved = await first.call('POST', `/export-orders/${orderId}/approve`);
  expect([selfApproved.status, selfApproved.body.error.code]).toEqual([403, 'second_operator_required']);
  expect((await first.call('GET', `/export-orders/${orderId}`)).body.status).toBe('pending');
  const early = await first.call('GET', `/export-orders/${orderId}/file`);
  expect([early.status, early.body.error.code]).toEqual([409, 'export_file_unavailable']);

  const approved = await second.call('POST', `/export-orders/${orderId}/approve`);
  expect([approved.status, approved.body.status]).toEqual([200, 'approved']);
  await waitUntil(
    async () => ['done', 'failed'].includes((await first.call('GET', `/export-orders/${orderId}`)).body.status as string),
    'the vault to write the export',
    60_000,
  );
  const done = (await first.call('GET', `/export-orders/${orderId}`)).body;
  expect(done).toMatchObject({
    status: 'done',
    exported: CARDS.length,
    missing: 0,
    requestedBy: { email: FIRST.email },
    approvedBy: { email: SECOND.email },
  });

  // The admin API hands out the ciphertext; the recipient's key opens it.
  const download = await fetch(`${env.stack.adminUrl}/admin/v1/export-orders/${orderId}/file`, {
    headers: { cookie: second.cookie as string, 'x-forwarded-for': '198.18.2.2' },
  });
  expect(download.status).toBe(200);
  expect(download.headers.get('content-type')).toBe('application/pgp-encrypted');
  const ciphertext = new Uint8Array(await download.arrayBuffer());
  expect(ciphertext.byteLength).toBe(done.bytes);
  expect(CARDS.some((c) => Buffer.from(ciphertext).includes(c.number))).toBe(false);
  const plaintext = await decryptWith(recipient.privateKey, ciphertext);
  const exported = cardsIn('jsonl', plaintext);
  // Identical cards (number, expiry, holder), each once, nothing else.
  expect(exported.map(({ id: _id, ...card }) => card).sort(byNumber)).toEqual([...CARDS].sort(byNumber));
  expect(new Set(exported.map((c) => c.id)).size).toBe(CARDS.length);
  expect(exported.every((c) => c.id.startsWith('tok.'))).toBe(true);
  // The stranger's key cannot open it.
  await expect(decryptWith(stranger.privateKey, ciphertext)).rejects.toThrow();

  // npm run exports downloads the same ciphertext.
  const out = path.join(dir, 'export.jsonl.pgp');
  const cliDownload = exportsCli('download', orderId, '--out', out);
  expect(cliDownload.status).toBe(0);
  expect(Buffer.from(fs.readFileSync(out)).equals(Buffer.from(ciphertext))).toBe(true);

  // Selected tokens, in Stripe's layout: the listed card and a token that is not the merchant's.
  const some = exported[0] as Card & { id: string };
  const selected = await first.call('POST', `/merchants/${MERCHANT}/export-requests`, {
    mode: 'live',
    format: 'stripe',
    recipient: recipientFingerprint,
    tokens: [some.id, 'tok.notthemerchantsatallxxxxxxxxxxxx'],
    reason: 'one card again',
  });
  expect(selected.status).toBe(201);
  expect((await second.call('POST', `/export-orders/${selected.body.id}/approve`)).status).toBe(200);
  await waitUntil(
    async () => (await first.call('GET', `/export-orders/${selected.body.id}`)).body.status === 'done',
    'the vault to write the second export',
    60_000,
  );
  expect((await first.call('GET', `/export-orders/${selected.body.id}`)).body).toMatchObject({ exported: 1, missing: 1 });
  const second_file = await fetch(`${env.stack.adminUrl}/admin/v1/export-orders/${selected.body.id}/file`, {
    headers: { cookie: first.cookie as string, 'x-forwarded-for': '198.18.2.1' },
  });
  const selectedCards = cardsIn('stripe', await decryptWith(recipient.privateKey, new Uint8Array(await second_file.arrayBuffer())));
  expect(selectedCards).toEqual([some]);

  // The merchant's day allows two requests (EXPORT_MAX_PER_MERCHANT_PER_DAY=2): the third is refused.
  const third = await first.call('POST', `/merchants/${MERCHANT}/export-requests`, {
    mode: 'live',
    format: 'csv',
    recipient: recipientFingerprint,
    reason: 'once more',
  });
  expect([third.status, third.body.error.code]).toEqual([429, 'export_rate_limited']);
  expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);

  // Removing the recipient is audited, and later requests to it are refused.
  expect((await second.call('DELETE', `/merchants/${MERCHANT}/export-recipients/${recipientFingerprint}`)).status).toBe(204);

  // Audited, by the operator who did each step; no card number in the audit, the answers or any log.
  const audit = await second.call('GET', `/audit?merchantId=${MERCHANT}`);
  expect((audit.body.entries as Array<{ action: string; actor: string }>).map((e) => [e.action, e.actor])).toEqual(
    expect.arrayContaining([
      ['merchant.export_recipient_registered', FIRST.email],
      ['merchant.export_requested', FIRST.email],
      ['merchant.export_approved', SECOND.email],
      ['merchant.export_downloaded', SECOND.email],
      ['merchant.export_downloaded', 'cli:' + os.userInfo().username],
      ['merchant.export_recipient_removed', SECOND.email],
    ]),
  );
  // The vault logged the export (ids and counts), so its log below is the one that saw the cards.
  expect(env.stack.vault.output).toContain('card export written');
  const seen = [audit.text, JSON.stringify(done), cliDownload.stdout, cliDownload.stderr, ...env.stack.processes.map((p) => p.output)];
  for (const text of seen) expect(CARDS.filter((c) => text.includes(c.number))).toEqual([]);
});

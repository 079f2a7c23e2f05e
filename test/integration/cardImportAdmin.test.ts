/**
 * Card import through the admin API (issue 29 item 1, docs/migration.md "Through the admin API"),
 * with real processes and the shipped Redis users: an operator with a second factor asks for an
 * import, a vault answers with the import's public key, the old provider's file (encrypted to it
 * with openpgp) is uploaded through the admin service, the vault imports it, and the report comes
 * back through the admin service as ciphertext the merchant decrypts with its own key. The tokens
 * it names are the merchant's: they answer GET /v1/token with the merchant's live key.
 */
import { Redis } from 'ioredis';
import { isLuhnValid } from '@tessera/common';
import { cardImportKey } from '@tessera/merchant-data';
import { openpgp } from '../../services/vault/src/domain/openpgp';
import { base32Decode, hotp, totpStep } from '../../services/admin/src/domain/totp';
import { AdminClient } from './adminClient';
import { apiClient, useStack, waitUntil } from './harness';

jest.setTimeout(180_000);

const MERCHANT = 'moving-shop';
const OPERATOR = { email: 'migrations@tessera.test', password: 'migration-operator-password-1' };

const env = useStack({
  redis: { acl: true },
  env: { TRUSTED_PROXIES: '127.0.0.1/32' },
  serviceEnv: { vault: { IMPORT_POLL_INTERVAL_MS: '200', IMPORT_LEASE_MS: '2000' } },
});

function luhnDigit(partial: string): string {
  for (let d = 0; d <= 9; d++) if (isLuhnValid(partial + d)) return String(d);
  throw new Error('no Luhn digit');
}
/** Test BIN 424242, never a real card. */
const cardNumber = (i: number): string => {
  const partial = `424242${String(i).padStart(9, '0')}`;
  return partial + luhnDigit(partial);
};

/** A platform operator signed in with a second factor, as the dashboard leaves them. */
async function operatorWithMfa(): Promise<AdminClient> {
  const client = new AdminClient(env.stack.adminUrl, '127.0.0.9');
  expect((await client.login(OPERATOR.email, OPERATOR.password)).status).toBe(200);
  const enrolment = await client.call('POST', '/mfa/enrolment');
  expect(enrolment.status).toBe(200);
  const code = hotp(base32Decode(enrolment.body.secret as string) as Buffer, totpStep(Date.now()));
  const confirmed = await client.call('POST', '/mfa/enrolment/confirm', { code });
  expect(confirmed.status).toBe(200);
  client.csrfToken = confirmed.body.csrfToken as string;
  return client;
}

test('an operator imports a PGP file through the admin API and the merchant decrypts the report, whose tokens are its own', async () => {
  env.stack.createOperator(OPERATOR.email, OPERATOR.password, null);
  const liveKey = env.stack.createKey(MERCHANT, 'live');
  const admin = await operatorWithMfa();
  const merchantKey = await openpgp.generateKey({ type: 'ecc', curve: 'curve25519Legacy', userIDs: [{ name: 'moving shop' }] });

  const created = await admin.call('POST', `/merchants/${MERCHANT}/imports`, {
    mode: 'live',
    format: 'jsonl',
    reportRecipientKey: merchantKey.publicKey,
  });
  expect(created.status).toBe(202);
  const id = created.body.id as string;
  expect(created.body).toMatchObject({ status: 'creating', publicKey: null });

  // A vault makes the key pair; the operator polls for it.
  let publicKey = '';
  await waitUntil(
    async () => {
      const shown = await admin.call('GET', `/imports/${id}`);
      publicKey = (shown.body.publicKey as string | null) ?? '';
      return shown.body.status === 'awaiting_upload';
    },
    'the vault to make the import key',
    60_000,
  );
  expect(publicKey).toContain('-----BEGIN PGP PUBLIC KEY BLOCK-----');

  // The old provider's side: a small file encrypted to the import's key.
  const year = new Date().getUTCFullYear() + 2;
  const lines = [
    ...[0, 1, 2].map((i) => JSON.stringify({ id: `cus_${i}`, number: cardNumber(i), expiryMonth: 4, expiryYear: year })),
    JSON.stringify({ id: 'cus_bad', number: '4242424200000001', expiryMonth: 4, expiryYear: year }),
  ];
  const encrypted = await openpgp.encrypt({
    message: await openpgp.createMessage({ text: `${lines.join('\n')}\n` }),
    encryptionKeys: await openpgp.readKey({ armoredKey: publicKey }),
    format: 'binary',
  });
  const uploaded = await fetch(`${env.stack.adminUrl}/admin/v1/imports/${id}/file`, {
    method: 'PUT',
    headers: {
      cookie: admin.cookie ?? '',
      'x-csrf-token': admin.csrfToken ?? '',
      'x-forwarded-for': '127.0.0.9',
      'content-type': 'application/pgp-encrypted',
    },
    body: Buffer.from(encrypted as Uint8Array),
  });
  expect(uploaded.status).toBe(202);
  expect(await uploaded.json()).toMatchObject({ status: 'queued' });

  let status: Record<string, any> = {};
  await waitUntil(
    async () => {
      status = (await admin.call('GET', `/imports/${id}`)).body as Record<string, any>;
      return status.status === 'done' || status.status === 'failed';
    },
    'the vault to import the file',
    90_000,
  );
  expect(status).toMatchObject({ status: 'done', reportReady: true, counts: { records: 4, processed: 4, imported: 3, failed: 1 } });

  const report = await fetch(`${env.stack.adminUrl}/admin/v1/imports/${id}/report`, {
    headers: { cookie: admin.cookie ?? '', 'x-forwarded-for': '127.0.0.9' },
  });
  expect(report.status).toBe(200);
  expect(report.headers.get('content-type')).toBe('application/pgp-encrypted');
  const ciphertext = Buffer.from(await report.arrayBuffer());
  const { data } = await openpgp.decrypt({
    message: await openpgp.readMessage({ binaryMessage: ciphertext }),
    decryptionKeys: await openpgp.readPrivateKey({ armoredKey: merchantKey.privateKey }),
    format: 'utf8',
  });
  const rows = (data as string).trimEnd().split('\n');
  expect(rows[0]).toBe('line,old_id,outcome,token,reason');
  expect(rows.find((row) => row.startsWith('4,'))).toBe('4,cus_bad,failed,,card_number_invalid');
  const tokens = rows
    .slice(1)
    .map((row) => row.split(','))
    .filter(([, , outcome]) => outcome === 'imported')
    .map(([, oldId, , token]) => ({ oldId, token: token as string }));
  expect(tokens.map((t) => t.oldId)).toEqual(['cus_0', 'cus_1', 'cus_2']);

  // The tokens exist, are the merchant's, and show the card's last four.
  const api = apiClient(env.stack, liveKey.apiKey);
  for (const [i, { token }] of tokens.entries()) {
    const res = await api('GET', `/v1/token/${token}`);
    expect({ token, status: res.status, last4: res.body.last4 }).toEqual({ token, status: 200, last4: cardNumber(i).slice(-4) });
  }

  // Audited, and nothing of the key or the cards reached the admin side.
  const auditLog = await admin.call('GET', `/audit?merchantId=${MERCHANT}`);
  const actions = (auditLog.body.entries as { action: string }[]).map((e) => e.action);
  expect(actions).toEqual(expect.arrayContaining(['import.created', 'import.uploaded', 'import.report_downloaded']));
  for (const text of [env.stack.admin?.output ?? '', env.stack.vault.output, JSON.stringify(status), auditLog.text]) {
    expect([0, 1, 2].map(cardNumber).filter((pan) => text.includes(pan))).toEqual([]);
  }
  // The import's end destroyed its key and the uploaded file (the vault's user may look).
  const redis = new Redis(env.redis.users?.vault as string);
  try {
    expect(await redis.exists(cardImportKey(id, 'key'), cardImportKey(id, 'upload'))).toBe(0);
  } finally {
    redis.disconnect();
  }
});

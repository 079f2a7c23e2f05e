/**
 * Card import (issue 29, docs/migration.md#importing-cards) through real processes: the vault CLI
 * creates the import and uploads a PGP file of 20,000 generated cards, the vault's worker imports
 * it, is killed with SIGKILL in the middle, and a vault started again finishes it from its
 * checkpoint. Every card ends up with exactly one token (counted by fingerprint in Redis), the bad
 * records are reported by line and reason, and no card number reaches a log, the CLI or the report.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { Redis } from 'ioredis';
import { isLuhnValid } from '@tessera/common';
import { ROOT } from '@tessera/stack';
import { openpgp } from '../../services/vault/src/domain/openpgp';
import { parseCard } from '../../services/vault/src/store/records';
import { useStack, waitUntil } from './harness';

jest.setTimeout(240_000);

const CARDS = 20_000;
const MERCHANT = 'migrating-shop';

const env = useStack({
  serviceEnv: { vault: { IMPORT_POLL_INTERVAL_MS: '200', IMPORT_LEASE_MS: '2000', IMPORT_BATCH_SIZE: '500' } },
});

function luhnDigit(partial: string): string {
  for (let d = 0; d <= 9; d++) if (isLuhnValid(partial + d)) return String(d);
  throw new Error('no Luhn digit');
}

/** Card i: test BIN 424242, never a real card. */
const cardNumber = (i: number): string => {
  const partial = `424242${String(i).padStart(9, '0')}`;
  return partial + luhnDigit(partial);
};

function* fileLines(): Generator<string> {
  const year = new Date().getUTCFullYear() + 3;
  for (let i = 0; i < CARDS; i++) {
    yield `${JSON.stringify({ id: `cus_${i}`, number: cardNumber(i), expiryMonth: (i % 12) + 1, expiryYear: year, holderName: 'Ada Lovelace' })}\n`;
    if (i === 100) yield `{"id":"cus_bad_luhn","number":"4242424200000001","expiryMonth":1,"expiryYear":${year}}\n`;
    if (i === 200) yield '{"id":"cus_broken", "number": "42424242\n';
    if (i === 300) yield `{"id":"cus_no_expiry","number":"${cardNumber(300)}"}\n`;
    // The same card again under another id: one token for both.
    if (i === 400) yield `${JSON.stringify({ id: 'cus_again', number: cardNumber(5), expiryMonth: 6, expiryYear: year })}\n`;
  }
}

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-import-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function vaultCli(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [path.join(ROOT, 'services/vault/dist/cli/vault.js'), ...args], {
    cwd: ROOT,
    env: { ...env.stack.env, REDIS_URL: env.redis.url },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** Every token of the merchant by its fingerprint, read raw from Redis. */
async function tokensByFingerprint(redis: Redis): Promise<Map<string, string[]>> {
  const byFingerprint = new Map<string, string[]>();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', 'tessera:card:{tok.*', 'COUNT', 1000);
    cursor = next;
    const values = keys.length > 0 ? await redis.mgetBuffer(keys) : [];
    values.forEach((value, i) => {
      if (value === null) return;
      const card = parseCard(value);
      if (card.merchantId !== MERCHANT || card.fingerprint === undefined) return;
      const token = (keys[i] as string).slice('tessera:card:{'.length, -1);
      byFingerprint.set(card.fingerprint, [...(byFingerprint.get(card.fingerprint) ?? []), token]);
    });
  } while (cursor !== '0');
  return byFingerprint;
}

test('an import killed in the middle finishes after a restart with every card imported exactly once', async () => {
  const merchantKey = await openpgp.generateKey({ type: 'ecc', curve: 'curve25519Legacy', userIDs: [{ name: 'migrating shop' }] });
  fs.writeFileSync(path.join(dir, 'merchant.asc'), merchantKey.publicKey);

  const created = vaultCli(
    'import',
    'create',
    '--merchant',
    MERCHANT,
    '--mode',
    'live',
    '--format',
    'jsonl',
    '--report-key',
    path.join(dir, 'merchant.asc'),
    '--json',
  );
  expect(created.stderr).toBe('');
  const { id, publicKey, state } = JSON.parse(created.stdout) as { id: string; publicKey: string; state: string };
  expect(state).toBe('awaiting_upload');

  // The old provider's side: the file encrypted, as a stream, to the import's key.
  const encrypted = await openpgp.encrypt({
    message: await openpgp.createMessage({
      binary: Readable.toWeb(
        Readable.from(
          (function* () {
            for (const line of fileLines()) yield Buffer.from(line);
          })(),
        ),
      ) as ReadableStream<Uint8Array>,
    }),
    encryptionKeys: await openpgp.readKey({ armoredKey: publicKey }),
    format: 'binary',
  });
  const file = path.join(dir, 'cards.jsonl.pgp');
  await new Promise<void>((resolve, reject) =>
    Readable.fromWeb(encrypted as import('node:stream/web').ReadableStream)
      .pipe(fs.createWriteStream(file))
      .on('finish', resolve)
      .on('error', reject),
  );

  const redis = new Redis(env.redis.url);
  try {
    const uploaded = vaultCli('import', 'upload', id, file);
    expect(uploaded.status).toBe(0);

    // Killed once some batches are checkpointed, before the end.
    let processedAtKill = 0;
    await waitUntil(
      async () => {
        processedAtKill = Number(await redis.hget(`tessera:import:{${id}}:meta`, 'processed'));
        return processedAtKill >= 1000;
      },
      'the import to checkpoint a batch',
      60_000,
    );
    await env.stack.vaults[0]!.stop('SIGKILL');
    const atKill = await redis.hgetall(`tessera:import:{${id}}:meta`);
    expect({ state: atKill.state, before: Number(atKill.processed) < CARDS }).toEqual({ state: 'running', before: true });

    const restarted = await env.stack.startReplica('vault', 0);
    const finished = vaultCli('import', 'status', id, '--wait', '--json');
    expect(finished.status).toBe(0);
    const status = JSON.parse(finished.stdout) as Record<string, unknown>;
    expect(status).toMatchObject({ state: 'done', processed: CARDS + 4, failed: 3 });
    expect((status.imported as number) + (status.duplicates as number)).toBe(CARDS + 1);
    // The restarted vault resumed it (its lines are read once this process's event loop runs again).
    await restarted.waitForOutput('card import resumed');

    // Every card once: as many fingerprints as cards, one token each.
    const byFingerprint = await tokensByFingerprint(redis);
    expect(byFingerprint.size).toBe(CARDS);
    expect([...byFingerprint.values()].filter((tokens) => tokens.length !== 1)).toEqual([]);

    // The report, decrypted with the merchant's private key.
    const report = vaultCli('import', 'report', id, '--out', path.join(dir, 'report.csv.pgp'));
    expect(report.status).toBe(0);
    const { data } = await openpgp.decrypt({
      message: await openpgp.readMessage({ binaryMessage: fs.readFileSync(path.join(dir, 'report.csv.pgp')) }),
      decryptionKeys: await openpgp.readPrivateKey({ armoredKey: merchantKey.privateKey }),
      format: 'utf8',
    });
    const rows = (data as string).trimEnd().split('\n');
    expect(rows[0]).toBe('line,old_id,outcome,token,reason');
    expect(rows).toHaveLength(CARDS + 4 + 1);
    const failedRows = rows.filter((row) => row.includes(',failed,'));
    // Line numbers count every line of the file: the bad Luhn one follows cards 0-100.
    expect(failedRows).toEqual([
      '102,cus_bad_luhn,failed,,card_number_invalid',
      '203,,failed,,record_malformed',
      '304,cus_no_expiry,failed,,expiry_missing',
    ]);
    const tokenOf = new Map(rows.slice(1).map((row) => [row.split(',')[1], row.split(',')[3]]));
    expect(tokenOf.get('cus_again')).toBe(tokenOf.get('cus_5'));
    const reportTokens = new Set([...tokenOf.values()].filter(Boolean));
    expect(reportTokens.size).toBe(CARDS);
    expect([...byFingerprint.values()].every(([token]) => reportTokens.has(token as string))).toBe(true);

    // No card number anywhere a person reads.
    const sample = [cardNumber(0), cardNumber(5), cardNumber(12_345), '4242424200000001'];
    for (const text of [restarted.output, env.stack.vault.output, created.stdout, finished.stdout, finished.stderr, data as string]) {
      expect(sample.filter((pan) => text.includes(pan))).toEqual([]);
    }
    // The import's end destroyed its key and the uploaded file.
    expect(await redis.exists(`tessera:import:{${id}}:key`, `tessera:import:{${id}}:upload`)).toBe(0);
  } finally {
    redis.disconnect();
  }
});

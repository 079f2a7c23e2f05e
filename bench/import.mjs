/**
 * Card import end to end (issue 29, docs/migration.md#importing-cards): BENCH_IMPORT_CARDS
 * (1,000,000) generated cards, distinct, Luhn-valid, under the test BIN 424242 (never a real card;
 * a live-mode merchant, as test mode takes only the four published test cards), written as JSON
 * lines and OpenPGP-encrypted as they are generated; then `npm run vault -- import create` and
 * `upload` (the CLI, as an operator runs them), and the vault's import worker runs it. Two figures:
 *   cardsPerSecond - cards / seconds from the upload's end to the import's end (integrity check,
 *                    tokenization with dedupe, checkpoints and the encrypted report included);
 *   peakRssMb      - the vault process's peak RSS meanwhile (target: flat, under 200 MB).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import * as openpgp from 'openpgp';

export const IMPORT_RATE_TARGET = 5000;
export const IMPORT_RSS_TARGET_MB = 200;

function luhnCheckDigit(partial) {
  let sum = 0;
  for (let i = partial.length - 1, double = true; i >= 0; i--, double = !double) {
    let d = partial.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return String((10 - (sum % 10)) % 10);
}

/** Card `i` of the generated file: 424242, nine digits of i, the Luhn digit. */
export function generatedCardNumber(i) {
  const partial = `424242${String(i).padStart(9, '0')}`;
  return partial + luhnCheckDigit(partial);
}

function* jsonLines(count) {
  const year = new Date().getUTCFullYear() + 4;
  for (let start = 0; start < count; start += 2000) {
    let text = '';
    for (let i = start; i < Math.min(count, start + 2000); i++) {
      text += `{"id":"old_${i}","number":"${generatedCardNumber(i)}","expiryMonth":${(i % 12) + 1},"expiryYear":${year},"holderName":"Bench Holder"}\n`;
    }
    yield Buffer.from(text);
  }
}

/** The file as the old provider makes it: generated and encrypted as a stream, to `publicKey`. */
export async function writeEncryptedCards(file, count, publicKey) {
  const encrypted = await openpgp.encrypt({
    message: await openpgp.createMessage({ binary: Readable.toWeb(Readable.from(jsonLines(count))) }),
    encryptionKeys: await openpgp.readKey({ armoredKey: publicKey }),
    format: 'binary',
  });
  await pipeline(Readable.fromWeb(encrypted), fs.createWriteStream(file));
}

function cli(args, env) {
  const run = spawnSync(process.execPath, ['services/vault/dist/cli/vault.js', ...args], { env, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`vault ${args.slice(0, 2).join(' ')} exited ${run.status}: ${run.stderr}`);
  return run.stdout;
}

function rssMb(pid) {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

export async function importPhase({ cliEnv, redisUrl, vaultPid, log, cards = 1_000_000 }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-bench-import-'));
  const redis = new Redis(redisUrl);
  try {
    const recipient = await openpgp.generateKey({ type: 'ecc', curve: 'curve25519Legacy', userIDs: [{ name: 'bench merchant' }] });
    fs.writeFileSync(path.join(dir, 'merchant.asc'), recipient.publicKey);
    const created = JSON.parse(
      cli(
        [
          'import',
          'create',
          '--merchant',
          'bench-import',
          '--mode',
          'live',
          '--format',
          'jsonl',
          '--report-key',
          path.join(dir, 'merchant.asc'),
          '--json',
        ],
        cliEnv,
      ),
    );
    log(`import: generating ${cards} cards, encrypted to import ${created.id}`);
    const file = path.join(dir, 'cards.jsonl.pgp');
    await writeEncryptedCards(file, cards, created.publicKey);
    const fileMb = fs.statSync(file).size / 1048576;
    log(`import: uploading ${fileMb.toFixed(0)} MB`);
    const idleRss = rssMb(vaultPid);
    cli(['import', 'upload', created.id, file], cliEnv);
    const started = Date.now();
    let peak = idleRss;
    let status;
    for (;;) {
      peak = Math.max(peak, rssMb(vaultPid));
      status = await redis.hgetall(`tessera:import:{${created.id}}:meta`);
      if (status.state === 'done' || status.state === 'failed') break;
      await sleep(250);
    }
    const seconds = (Date.now() - started) / 1000;
    if (status.state !== 'done') throw new Error(`the import failed: ${status.failure}`);
    const result = {
      cards,
      fileMb: Math.round(fileMb),
      seconds,
      cardsPerSecond: Math.round(cards / seconds),
      peakRssMb: Math.round(peak),
      idleRssMb: Math.round(idleRss),
      imported: Number(status.imported),
      duplicates: Number(status.duplicates),
      failed: Number(status.failed),
    };
    log(`import: ${result.cardsPerSecond} cards/s, vault peak RSS ${result.peakRssMb} MB`);
    return result;
  } finally {
    redis.disconnect();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function importLines(r) {
  return [
    '| card import (PGP file, end to end) | value | target |',
    '|---|---:|---:|',
    `| cards/s (${r.cards} cards, ${r.fileMb} MB file, ${r.seconds.toFixed(1)} s) | ${r.cardsPerSecond} | >= ${IMPORT_RATE_TARGET} |`,
    `| vault peak RSS MB (idle ${r.idleRssMb}) | ${r.peakRssMb} | < ${IMPORT_RSS_TARGET_MB} |`,
    `| imported / duplicates / failed | ${r.imported} / ${r.duplicates} / ${r.failed} | ${r.cards} / 0 / 0 |`,
    '',
  ];
}

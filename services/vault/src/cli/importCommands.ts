import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { UsageError, type CliIo } from '@tessera/common';
import type { VaultConfig } from '../config';
import type { KeyRing } from '../domain/keyRing';
import { createImport, importReport, importStatus, ImportRequestError, uploadImport } from '../app/imports/imports';
import { openImportStore } from '../openImportStore';
import type { ImportMeta } from '../store/importStore';

export const IMPORT_USAGE = `  import create --merchant <id> --mode <test|live> --format <jsonl|csv|stripe> --report-key <file>
         [--key-type curve25519|rsa4096] [--public-key-out <file>] [--json]
      Creates a card import (docs/migration.md#importing-cards): prints its id, and writes the import's
      OpenPGP public key (the old provider encrypts its file to it) to --public-key-out or stdout.
      --report-key: the merchant's armored OpenPGP public key; the report is encrypted to it.
  import upload <id> <file>
      Uploads the encrypted file (binary or armored OpenPGP) and queues the import for the vault.
  import status <id> [--wait] [--json]
      State (creating, awaiting_upload, queued, running, done, failed) and counts; --wait returns once done or failed.
  import report <id> --out <file>
      Writes the report (OpenPGP, to the report key): line, old_id, outcome, token, reason per record.`;

export interface ImportCommandValues {
  merchant?: string | undefined;
  mode?: string | undefined;
  format?: string | undefined;
  'report-key'?: string | undefined;
  'key-type'?: string | undefined;
  'public-key-out'?: string | undefined;
  out?: string | undefined;
  wait?: boolean | undefined;
  json?: boolean | undefined;
}

function required(value: string | undefined, name: string): string {
  if (value === undefined || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

function statusView(meta: ImportMeta): Record<string, unknown> {
  return {
    id: meta.id,
    merchantId: meta.merchantId,
    mode: meta.mode,
    format: meta.format,
    state: meta.state,
    records: meta.records ?? null,
    processed: meta.processed,
    imported: meta.imported,
    duplicates: meta.duplicates,
    failed: meta.failed,
    ...(meta.failure !== undefined && { failure: meta.failure }),
    createdAt: meta.createdAt,
    ...(meta.finishedAt !== undefined && { finishedAt: meta.finishedAt }),
    publicKeyFingerprint: meta.publicKeyFingerprint,
  };
}

function describe(meta: ImportMeta): string {
  const s = statusView(meta);
  return (
    `${meta.id}: ${meta.state}${meta.failure !== undefined ? ` (${meta.failure})` : ''}; ` +
    `processed ${meta.processed}${meta.records !== undefined ? ` of ${meta.records} lines` : ''}, imported ${meta.imported}, ` +
    `duplicates ${meta.duplicates}, failed ${meta.failed} (${String(s.format)}, merchant ${meta.merchantId}, ${meta.mode})`
  );
}

/** `npm run vault -- import …`. Exit 0 done, 1 failed (an import that failed, Redis), 2 usage. */
export async function runImportCommand(
  args: { positionals: string[]; values: ImportCommandValues },
  config: VaultConfig,
  openRing: () => { ring: KeyRing; close(): void },
  io: CliIo,
): Promise<number> {
  const [, sub, id, file] = args.positionals;
  const v = args.values;
  const { store, ready, close } = openImportStore(config);
  try {
    await ready(5000);
    if (sub === 'create') {
      const keyType = v['key-type'] ?? 'curve25519';
      if (keyType !== 'curve25519' && keyType !== 'rsa4096') throw new UsageError('--key-type must be curve25519 or rsa4096');
      const reportKeyFile = required(v['report-key'], 'report-key');
      const keys = openRing();
      try {
        const meta = await createImport(
          { store, keyRing: keys.ring, now: () => new Date() },
          {
            merchantId: required(v.merchant, 'merchant'),
            mode: required(v.mode, 'mode'),
            format: required(v.format, 'format'),
            reportRecipientKey: fs.readFileSync(reportKeyFile, 'utf8'),
            keyType,
          },
        );
        if (v['public-key-out'] !== undefined) fs.writeFileSync(v['public-key-out'], meta.publicKey);
        if (v.json) io.out(JSON.stringify({ ...statusView(meta), publicKey: meta.publicKey }));
        else {
          io.out(meta.id);
          if (v['public-key-out'] === undefined) io.out(meta.publicKey.trimEnd());
          io.err(
            `Import ${meta.id} created (key ${meta.publicKeyFingerprint}). Encrypt the file to its public key, then: npm run vault -- import upload ${meta.id} <file>`,
          );
        }
        return 0;
      } finally {
        keys.close();
      }
    }
    if (id === undefined) throw new UsageError(`import ${sub ?? ''}: the import id is required`);
    if (sub === 'upload') {
      if (file === undefined) throw new UsageError('import upload: the file is required');
      if (!fs.existsSync(file)) throw new UsageError(`import upload: no file "${file}"`);
      const meta = await uploadImport(store, id, fs.createReadStream(file, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>);
      io.out(v.json ? JSON.stringify(statusView(meta)) : describe(meta));
      return 0;
    }
    if (sub === 'status') {
      let meta = await importStatus(store, id);
      while (v.wait && meta.state !== 'done' && meta.state !== 'failed') {
        await sleep(1000);
        meta = await importStatus(store, id);
      }
      io.out(v.json ? JSON.stringify(statusView(meta)) : describe(meta));
      return meta.state === 'failed' ? 1 : 0;
    }
    if (sub === 'report') {
      const out = required(v.out, 'out');
      const chunks = importReport(store, id);
      // The first chunk before the file: a report not ready yet leaves no empty file behind.
      const first = await chunks.next();
      const fd = fs.openSync(out, 'w');
      try {
        if (!first.done) fs.writeSync(fd, first.value);
        for await (const chunk of chunks) fs.writeSync(fd, chunk);
      } finally {
        fs.closeSync(fd);
      }
      io.err(`report of ${id} written to ${out} (OpenPGP, to the report key)`);
      return 0;
    }
    throw new UsageError(`unknown import command "${sub ?? ''}"`);
  } catch (err) {
    if (err instanceof ImportRequestError) {
      io.err(`import: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await close();
  }
}

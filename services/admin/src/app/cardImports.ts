import { z } from 'zod';
import { TesseraError } from '@tessera/common';
import {
  CARD_IMPORT_FORMATS,
  CARD_IMPORT_KEY_TYPES,
  CARD_IMPORT_ID_PATTERN,
  type AuditLog,
  type CardImportStatus,
} from '@tessera/merchant-data';
import type { RedisCardImportRequests } from '../store/cardImportRequests';
import { canManageMerchant } from '../domain/operators';
import { auditAs, type Caller } from './caller';

/**
 * Card imports through the admin API (issue 29 item 1, docs/adr/0015-card-import.md): an operator
 * asks for an import, a vault makes its key pair (this service holds no key ring and never talks to
 * the vault: the request goes through Redis), the operator uploads the old provider's file as the
 * ciphertext it is, and downloads the report, ciphertext to the merchant's own key. Nothing here
 * can decrypt either: the admin Redis user cannot even read the import's sealed private key.
 *
 * Who: merchant operators for their own merchant, platform operators for any; all three steps
 * bring card data in or a token map out, so each takes an operator with a second factor (as
 * shredding does) and is audited.
 */
export interface CardImportDeps {
  imports: Pick<RedisCardImportRequests, 'request' | 'get' | 'clearUpload' | 'appendUpload' | 'queue' | 'reportChunk'>;
  audit: Pick<AuditLog, 'append'>;
  now: () => Date;
  /** IMPORT_UPLOAD_MAX_BYTES: larger uploads are refused (413) and their chunks deleted. */
  maxUploadBytes: number;
}

export interface ImportCaller extends Caller {
  mfaEnabled: boolean;
}

/** Redis holds the file in chunks of this size, as the vault's CLI upload makes them. */
export const UPLOAD_CHUNK_BYTES = 1024 * 1024;

const ARMORED_PUBLIC_KEY = /^\s*-----BEGIN PGP PUBLIC KEY BLOCK-----[\s\S]+-----END PGP PUBLIC KEY BLOCK-----\s*$/;

export const cardImportRequestSchema = z.strictObject({
  mode: z.enum(['test', 'live'], { error: '"mode" must be "test" or "live".' }).meta({
    description: 'The mode the cards are imported in: test mode takes only the published test cards.',
  }),
  format: z.enum(CARD_IMPORT_FORMATS, { error: '"format" must be "jsonl", "csv" or "stripe".' }),
  reportRecipientKey: z
    .string({ error: '"reportRecipientKey" must be an armored OpenPGP public key.' })
    .max(16 * 1024, { error: '"reportRecipientKey" must be an armored OpenPGP public key of at most 16 KiB.' })
    .regex(ARMORED_PUBLIC_KEY, { error: '"reportRecipientKey" must be an armored OpenPGP public key.' })
    .meta({ description: "The merchant's armored OpenPGP public key: the report is encrypted to it." }),
  keyType: z
    .enum(CARD_IMPORT_KEY_TYPES, { error: '"keyType" must be "curve25519" or "rsa4096".' })
    .default('curve25519')
    .meta({ description: 'The import key the old provider encrypts to: rsa4096 for sources that demand RSA.' }),
});
export type CardImportRequestInput = z.output<typeof cardImportRequestSchema>;

export const cardImportPathSchema = z.object({
  importId: z.string({ error: '"importId" must be a string.' }).regex(CARD_IMPORT_ID_PATTERN, { error: 'No such import.' }),
});

/** What an operator sees of an import: no report recipient key echoed, no operator record. */
export interface CardImportView {
  id: string;
  merchantId: string;
  mode: string;
  format: string;
  status: CardImportStatus['state'];
  createdAt: string;
  /** The armored key the old provider encrypts the file to; null until a vault made it. */
  publicKey: string | null;
  publicKeyFingerprint: string | null;
  counts: { records: number | null; processed: number; imported: number; duplicates: number; failed: number };
  uploadedBytes: number;
  failure: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  reportReady: boolean;
}

export function viewOfImport(s: CardImportStatus): CardImportView {
  return {
    id: s.id,
    merchantId: s.merchantId,
    mode: s.mode,
    format: s.format,
    status: s.state,
    createdAt: s.createdAt,
    publicKey: s.publicKey === '' ? null : s.publicKey,
    publicKeyFingerprint: s.publicKeyFingerprint === '' ? null : s.publicKeyFingerprint,
    counts: { records: s.records ?? null, processed: s.processed, imported: s.imported, duplicates: s.duplicates, failed: s.failed },
    uploadedBytes: s.uploadedBytes,
    failure: s.failure ?? null,
    startedAt: s.startedAt ?? null,
    finishedAt: s.finishedAt ?? null,
    reportReady: s.state === 'done' && s.reportChunks > 0,
  };
}

function checkSecondFactor(caller: ImportCaller): void {
  if (!caller.mfaEnabled) throw new TesseraError('second_factor_required');
}

/** The import, if the caller may manage its merchant; otherwise not found (its existence is not revealed). */
async function reachableImport(deps: CardImportDeps, caller: Caller, importId: string): Promise<CardImportStatus> {
  const found = await deps.imports.get(importId);
  if (found === null || !canManageMerchant(caller, found.merchantId)) throw new TesseraError('import_not_found');
  return found;
}

export async function requestCardImport(
  deps: CardImportDeps,
  caller: ImportCaller,
  merchantId: string,
  input: CardImportRequestInput,
): Promise<CardImportView> {
  if (!canManageMerchant(caller, merchantId)) throw new TesseraError('merchant_forbidden', { param: 'merchantId' });
  checkSecondFactor(caller);
  const created = await deps.imports.request({
    merchantId,
    mode: input.mode,
    format: input.format,
    keyType: input.keyType,
    reportRecipientKey: input.reportRecipientKey,
    requestedBy: caller.actor.email,
    now: deps.now(),
  });
  await auditAs(deps, caller, {
    action: 'import.created',
    merchantId,
    details: { importId: created.id, mode: created.mode, format: created.format, keyType: input.keyType },
  });
  return viewOfImport(created);
}

export async function getCardImport(deps: CardImportDeps, caller: Caller, importId: string): Promise<CardImportView> {
  return viewOfImport(await reachableImport(deps, caller, importId));
}

/**
 * The operator's file, as it arrives, into Redis in 1 MiB chunks (memory holds one chunk whatever
 * the size), then queued for a vault's worker. It is ciphertext to the import's key; this service
 * cannot read it. An upload over the limit is refused and what was stored of it deleted.
 */
export async function uploadCardImport(
  deps: CardImportDeps,
  caller: ImportCaller,
  importId: string,
  file: AsyncIterable<Buffer>,
): Promise<CardImportView> {
  const found = await reachableImport(deps, caller, importId);
  checkSecondFactor(caller);
  if (found.state !== 'awaiting_upload') {
    throw new TesseraError('import_not_ready', {
      message:
        found.state === 'creating'
          ? 'The import key is not made yet: upload once GET /admin/v1/imports/{importId} shows a publicKey.'
          : `The import is ${found.state}: a file can be uploaded only once.`,
    });
  }
  await deps.imports.clearUpload(importId);
  const chunk = Buffer.allocUnsafe(UPLOAD_CHUNK_BYTES);
  let filled = 0;
  let total = 0;
  try {
    for await (const piece of file) {
      total += piece.length;
      if (total > deps.maxUploadBytes) {
        throw new TesseraError('body_too_large', { message: `The file is larger than this service takes (${deps.maxUploadBytes} bytes).` });
      }
      let offset = 0;
      while (offset < piece.length) {
        const taken = piece.copy(chunk, filled, offset);
        filled += taken;
        offset += taken;
        if (filled === UPLOAD_CHUNK_BYTES) {
          await deps.imports.appendUpload(importId, Buffer.from(chunk));
          filled = 0;
        }
      }
    }
  } catch (err) {
    await deps.imports.clearUpload(importId).catch(() => undefined);
    throw err;
  }
  if (filled > 0) await deps.imports.appendUpload(importId, Buffer.from(chunk.subarray(0, filled)));
  if (total === 0) throw new TesseraError('parameter_invalid', { message: 'The file is empty.' });
  await deps.imports.queue(importId);
  await auditAs(deps, caller, { action: 'import.uploaded', merchantId: found.merchantId, details: { importId, bytes: total } });
  return viewOfImport((await deps.imports.get(importId)) ?? found);
}

/**
 * The report's chunks, ciphertext to the merchant's key, once the import is done. Audited before
 * the first byte: a download that breaks off was still a download.
 */
export async function cardImportReport(
  deps: CardImportDeps,
  caller: ImportCaller,
  importId: string,
): Promise<{ chunks: AsyncGenerator<Buffer>; view: CardImportView }> {
  const found = await reachableImport(deps, caller, importId);
  checkSecondFactor(caller);
  if (found.state !== 'done' || found.reportChunks === 0) {
    throw new TesseraError('import_not_ready', { message: `The import is ${found.state}: its report is ready once it is done.` });
  }
  await auditAs(deps, caller, { action: 'import.report_downloaded', merchantId: found.merchantId, details: { importId } });
  const { imports } = deps;
  async function* chunks(): AsyncGenerator<Buffer> {
    for (let i = 0; i < found.reportChunks; i++) {
      const chunk = await imports.reportChunk(importId, i);
      if (chunk === null) throw new TesseraError('import_not_found', { message: 'The report has expired.' });
      yield chunk;
    }
  }
  return { chunks: chunks(), view: viewOfImport(found) };
}

import { randomBytes } from 'node:crypto';
import type { KeyRing } from '../../domain/keyRing';
import { keyModeOf } from '../../domain/tokenMode';
import { isImportFormat, type ImportFormat } from '../../domain/importFormats';
import { generateImportKeyPair, readRecipientKey, type ImportKeyType } from '../../domain/importKey';
import { newImportId, type ImportMeta } from '../../store/importStore';
import { runImport, type RunImportDeps } from './runImport';
import type { ImportStorePort } from './ports';
import { pollQueue } from './pollQueue';

/** A request the caller can fix; the CLI shows its message (never card data: none is involved here). */
export class ImportRequestError extends Error {}

const MERCHANT_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
export const UPLOAD_CHUNK_BYTES = 1024 * 1024;

/** Create: the import's own key pair, its public half answered for the old provider to encrypt to. */
export async function createImport(
  deps: { store: ImportStorePort; keyRing: KeyRing; now: () => Date },
  request: { merchantId: string; mode: string; format: string; reportRecipientKey: string; keyType?: ImportKeyType },
): Promise<ImportMeta> {
  if (!MERCHANT_ID.test(request.merchantId))
    throw new ImportRequestError('the merchant id must be 1-128 characters of A-Z a-z 0-9 _ . : -');
  if (keyModeOf(request.mode) === undefined) throw new ImportRequestError('the mode must be "test" or "live"');
  if (!isImportFormat(request.format)) throw new ImportRequestError('the format must be "jsonl", "csv" or "stripe"');
  try {
    await readRecipientKey(request.reportRecipientKey);
  } catch {
    throw new ImportRequestError('the report recipient key is not an armored OpenPGP public key that can encrypt');
  }
  const id = newImportId();
  const pair = await generateImportKeyPair(deps.keyRing, id, request.keyType ?? 'curve25519');
  const created = {
    id,
    merchantId: request.merchantId,
    mode: request.mode,
    format: request.format as ImportFormat,
    state: 'awaiting_upload' as const,
    createdAt: deps.now().toISOString(),
    publicKey: pair.publicKey,
    publicKeyFingerprint: pair.fingerprint,
    reportRecipientKey: request.reportRecipientKey,
    sealedPrivateKey: pair.sealedPrivateKey,
  };
  await deps.store.create(created);
  const meta = await deps.store.get(id);
  if (meta === null) throw new Error('the import was not stored');
  return meta;
}

async function existing(store: ImportStorePort, id: string): Promise<ImportMeta> {
  const meta = await store.get(id);
  if (meta === null) throw new ImportRequestError(`no import "${id}" (unknown, or its status has expired)`);
  return meta;
}

/**
 * Upload: the encrypted file into Redis as it is read (ciphertext only: no one but the vault can
 * open it), then queued for a vault's import worker. An upload replaces an earlier one until queued.
 */
export async function uploadImport(store: ImportStorePort, id: string, file: AsyncIterable<Buffer>): Promise<ImportMeta> {
  const meta = await existing(store, id);
  if (meta.state !== 'awaiting_upload') throw new ImportRequestError(`import ${id} is ${meta.state}: a file can be uploaded only once`);
  await store.clearUpload(id);
  let pending: Buffer[] = [];
  let size = 0;
  let total = 0;
  for await (const piece of file) {
    pending.push(piece);
    size += piece.length;
    total += piece.length;
    while (size >= UPLOAD_CHUNK_BYTES) {
      const all = Buffer.concat(pending);
      await store.appendUpload(id, all.subarray(0, UPLOAD_CHUNK_BYTES));
      pending = [all.subarray(UPLOAD_CHUNK_BYTES)];
      size = all.length - UPLOAD_CHUNK_BYTES;
    }
  }
  if (size > 0) await store.appendUpload(id, Buffer.concat(pending));
  if (total === 0) throw new ImportRequestError('the file is empty');
  await store.queue(id);
  return existing(store, id);
}

export async function importStatus(store: ImportStorePort, id: string): Promise<ImportMeta> {
  return existing(store, id);
}

/** The report's ciphertext, chunk by chunk; refused until the import is done. */
export async function* importReport(store: ImportStorePort, id: string): AsyncGenerator<Buffer> {
  const meta = await existing(store, id);
  if (meta.state !== 'done') throw new ImportRequestError(`import ${id} is ${meta.state}: its report is ready once it is done`);
  for (let i = 0; i < meta.reportChunks; i++) {
    const chunk = await store.reportChunk(id, i);
    if (chunk === null) throw new ImportRequestError(`the report of import ${id} has expired`);
    yield chunk;
  }
}

export interface ImportWorkerOptions extends Omit<RunImportDeps, 'stillHolding'> {
  pollIntervalMs: number;
  leaseMs: number;
}

export interface ImportWorker {
  /** Stops polling and waits for the import in progress to reach its next checkpoint. */
  stop(): Promise<void>;
}

/**
 * The vault's import worker: every pollIntervalMs it looks at the queue and runs each queued
 * import whose lease it takes, one at a time, renewing the lease while it works. A vault that dies
 * leaves the lease to lapse; the next one (any replica) resumes from the checkpoint.
 */
export function startImportWorker(options: ImportWorkerOptions): ImportWorker {
  const holder = randomBytes(8).toString('hex');
  const runOne = async (id: string): Promise<void> => {
    const meta = await options.store.get(id);
    if (meta === null) return options.store.forget(id);
    if (meta.state !== 'queued' && meta.state !== 'running') return options.store.forget(id);
    if (!(await options.store.takeLease(id, holder, options.leaseMs))) return;
    let holding = true;
    const renew = setInterval(
      () =>
        void options.store.renewLease(id, holder, options.leaseMs).then(
          (ok) => {
            if (!ok) holding = false;
          },
          () => undefined,
        ),
      Math.max(100, Math.floor(options.leaseMs / 3)),
    );
    renew.unref();
    try {
      options.log({ importId: id, processed: meta.processed }, meta.processed > 0 ? 'card import resumed' : 'card import started');
      await runImport({ ...options, stillHolding: () => holding && !worker.stopped }, meta);
    } finally {
      clearInterval(renew);
      await options.store.releaseLease(id, holder).catch(() => undefined);
    }
  };
  const worker = pollQueue({
    pollIntervalMs: options.pollIntervalMs,
    list: () => options.store.queued(),
    each: runOne,
    onError: (id, err) =>
      options.log({ importId: id, err: err instanceof Error ? err.message : 'unknown' }, 'card import interrupted; it resumes later'),
  });
  return worker;
}

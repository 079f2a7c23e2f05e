import { TesseraError, validateCard, type KeyMode } from '@tessera/common';
import type { CardToTokenize, TokenRecordView } from '../../domain/card';
import { openpgp } from '../../domain/openpgp';
import type { KeyRing } from '../../domain/keyRing';
import { createRecordParser, type ImportedCard } from '../../domain/importFormats';
import { openImportPrivateKey, openOutcomes, readRecipientKey, sealOutcomes } from '../../domain/importKey';
import type { ImportCounts, ImportMeta } from '../../store/importStore';
import { FileNotDecryptable, uploadLines, verifyUpload } from './decryptUpload';
import type { ImportStorePort, ImportTokenizer } from './ports';

export interface RunImportDeps {
  store: ImportStorePort;
  keyRing: KeyRing;
  tokenizer: ImportTokenizer;
  batchSize: number;
  /** How long the finished import's status and report are kept. */
  keepMs: number;
  now: () => Date;
  /** Checked before every checkpoint: false once this worker lost its lease (another runs the import). */
  stillHolding: () => boolean;
  log: (fields: Record<string, unknown>, message: string) => void;
}

/** Refusals a record earns by itself; any other error stops the batch (Redis down, say) and the import resumes later. */
const RECORD_ERRORS = new Set([
  'card_number_invalid',
  'card_expired',
  'parameter_invalid',
  'test_card_in_live_mode',
  'live_card_in_test_mode',
  'cvv_invalid',
  'number_is_alias',
]);

/** A record's own refusal; any other error (Redis down, say) stops the batch, which is not checkpointed: the import is tried again. */
function recordError(err: unknown): TesseraError {
  if (!(err instanceof TesseraError) || !RECORD_ERRORS.has(err.code)) {
    throw new Error(`the vault could not tokenize a batch (${err instanceof TesseraError ? err.code : 'error'})`);
  }
  return err;
}

const REPORT_HEADER = 'line,old_id,outcome,token,reason\n';
const REPORT_CHUNK_BYTES = 1024 * 1024;

function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

function reportRow(line: number, oldId: string, outcome: 'imported' | 'duplicate' | 'failed', token: string, reason: string): string {
  return `${line},${csvField(oldId)},${outcome},${token},${reason}\n`;
}

interface PendingRecord {
  line: number;
  card?: ImportedCard;
  reason?: string;
  oldId: string;
}

/**
 * Runs one import to its end (docs/adr/0015-card-import.md): verify the file, then stream it
 * through the parser into the vault's tokenize path (dedupe by fingerprint) batch by batch, each
 * batch checkpointed with its sealed report rows; then the report, encrypted to the merchant's
 * key. Started again after a crash, it skips the records a checkpoint covers: dedupe makes the
 * rest (done but not checkpointed) come back as the same tokens.
 */
export async function runImport(deps: RunImportDeps, meta: ImportMeta): Promise<'done' | 'failed' | 'lost'> {
  const { store, keyRing } = deps;
  if (meta.sealedPrivateKey === undefined) {
    await store.finish(meta.id, 'failed', deps.now(), deps.keepMs, 'import_key_missing');
    return 'failed';
  }
  const key = await openImportPrivateKey(keyRing, meta.id, meta.sealedPrivateKey);
  let verified: { hashes: string[]; lines: number };
  try {
    verified = await verifyUpload(store, meta.id, meta.uploadChunks, key);
  } catch (err) {
    if (!(err instanceof FileNotDecryptable)) throw err;
    deps.log({ importId: meta.id, reason: err.reason }, 'card import failed');
    await store.finish(meta.id, 'failed', deps.now(), deps.keepMs, err.reason);
    return 'failed';
  }
  if (!deps.stillHolding()) return 'lost';
  await store.markRunning(meta.id, verified.lines, deps.now());

  const counts: ImportCounts = { processed: meta.processed, imported: meta.imported, duplicates: meta.duplicates, failed: meta.failed };
  let batchIndex = await store.outcomeBatches(meta.id);
  const parser = createRecordParser(meta.format);
  const mode = meta.mode as KeyMode;
  let seen = 0;
  let batch: PendingRecord[] = [];

  /**
   * The batch's tokens (the slow part, waiting on Redis), the whole batch in one call of the
   * vault's batch path: its lookups, writes and claims go out together. Two batches may be at it.
   */
  const tokenize = async (records: PendingRecord[]): Promise<Array<TokenRecordView | TesseraError | undefined>> => {
    const outcomes: Array<TokenRecordView | TesseraError | undefined> = records.map(() => undefined);
    const cards: CardToTokenize[] = [];
    const items: number[] = [];
    const now = deps.now();
    records.forEach((record, i) => {
      const card = record.card;
      if (card === undefined) return;
      try {
        validateCard({ number: card.number, expiryMonth: card.expiryMonth, expiryYear: card.expiryYear }, mode, now);
      } catch (err) {
        outcomes[i] = recordError(err);
        return;
      }
      items.push(i);
      cards.push({
        merchantId: meta.merchantId,
        mode: meta.mode,
        number: card.number,
        expiryMonth: card.expiryMonth,
        expiryYear: card.expiryYear,
        holderName: card.holderName,
        cvv: '',
        dedupe: true,
      });
    });
    const tokenized = await deps.tokenizer.tokenizeDeduplicatedMany(cards);
    items.forEach((item, j) => {
      const outcome = tokenized[j];
      outcomes[item] = outcome === undefined || outcome instanceof TesseraError ? recordError(outcome) : outcome;
    });
    return outcomes;
  };

  /** Counts and sealed report rows of a tokenized batch, checkpointed in the file's order. */
  const commit = async (records: PendingRecord[], outcomes: Array<TokenRecordView | TesseraError | undefined>): Promise<void> => {
    let rows = '';
    records.forEach((record, i) => {
      const outcome = outcomes[i];
      if (outcome === undefined || outcome instanceof TesseraError) {
        counts.failed += 1;
        rows += reportRow(
          record.line,
          record.oldId,
          'failed',
          '',
          outcome instanceof TesseraError ? outcome.code : (record.reason ?? 'record_invalid'),
        );
      } else if (outcome.deduplicated) {
        counts.duplicates += 1;
        rows += reportRow(record.line, record.oldId, 'duplicate', outcome.token, '');
      } else {
        counts.imported += 1;
        rows += reportRow(record.line, record.oldId, 'imported', outcome.token, '');
      }
    });
    counts.processed += records.length;
    if (!deps.stillHolding()) throw new LeaseLost();
    await store.checkpoint(meta.id, sealOutcomes(keyRing, meta.id, batchIndex, rows), counts);
    batchIndex += 1;
  };

  // While one batch waits on its last round trips the next one starts: at most two are in flight.
  let inFlight: Promise<void> | undefined;
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const records = batch;
    batch = [];
    const work = tokenize(records);
    work.catch(() => undefined);
    const previous = inFlight;
    inFlight = (async () => {
      if (previous !== undefined) await previous;
      await commit(records, await work);
    })();
    inFlight.catch(() => undefined);
    if (previous !== undefined) await previous;
  };

  try {
    for await (const lines of uploadLines(store, meta.id, verified, key)) {
      for (const line of lines) {
        const parsed = line.text === null ? { ok: false as const, reason: 'record_too_long' as const } : parser.parse(line.text);
        if (parsed === null) continue;
        seen += 1;
        // Covered by a checkpoint of an earlier run.
        if (seen <= meta.processed) continue;
        batch.push(
          parsed.ok
            ? { line: line.number, card: parsed.card, oldId: parsed.card.oldId }
            : { line: line.number, reason: parsed.reason, oldId: parsed.oldId ?? '' },
        );
        if (batch.length >= deps.batchSize) await flush();
      }
    }
    await flush();
    await inFlight;
  } catch (err) {
    if (err instanceof LeaseLost) return 'lost';
    if (!(err instanceof FileNotDecryptable)) throw err;
    deps.log({ importId: meta.id, reason: err.reason }, 'card import failed');
    await store.finish(meta.id, 'failed', deps.now(), deps.keepMs, err.reason);
    return 'failed';
  }

  if (!deps.stillHolding()) return 'lost';
  await writeReport(deps, meta, batchIndex);
  await store.finish(meta.id, 'done', deps.now(), deps.keepMs);
  deps.log({ importId: meta.id, ...counts }, 'card import done');
  return 'done';
}

class LeaseLost extends Error {}

/** The report (CSV: line, old id, outcome, token, reason), OpenPGP-encrypted to the merchant's key as it is written. */
async function writeReport(deps: RunImportDeps, meta: ImportMeta, batches: number): Promise<void> {
  const { store, keyRing } = deps;
  await store.clearReport(meta.id);
  const recipient = await readRecipientKey(meta.reportRecipientKey);
  let next = -1;
  const source = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (next === -1) {
          controller.enqueue(Buffer.from(REPORT_HEADER));
        } else if (next >= batches) {
          controller.close();
          return;
        } else {
          const sealed = await store.outcomeBatch(meta.id, next);
          if (sealed === null) throw new Error('a checkpointed batch of the report is missing');
          controller.enqueue(Buffer.from(openOutcomes(keyRing, meta.id, next, sealed), 'utf8'));
        }
        next += 1;
      },
    },
    { highWaterMark: 1 },
  );
  const encrypted = (await openpgp.encrypt({
    message: await openpgp.createMessage({ binary: source, format: 'binary' }),
    encryptionKeys: recipient,
    format: 'binary',
  })) as ReadableStream<Uint8Array>;
  const reader = encrypted.getReader();
  let pending: Buffer[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (!done) {
      pending.push(Buffer.from(value));
      size += value.byteLength;
    }
    if ((done && size > 0) || size >= REPORT_CHUNK_BYTES) {
      await store.appendReport(meta.id, Buffer.concat(pending));
      pending = [];
      size = 0;
    }
    if (done) return;
  }
}

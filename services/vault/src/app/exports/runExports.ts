import { randomBytes } from 'node:crypto';
import type { KeyMode, Logger } from '@tessera/common';
import type { ExportOrder, RedisExportFileStore, RedisExportOrderStore, RedisExportRecipientStore } from '@tessera/merchant-data';
import type { TokenOwner } from '../../domain/card';
import { createRecordWriter, type ExportedCard } from '../../domain/importFormats';
import { readRecipientKey } from '../../domain/importKey';
import { openpgp, type PublicKey } from '../../domain/openpgp';
import type { CardStore } from '../../store/cardStore';
import { parseCard } from '../../store/records';
import type { RenderableCard } from '../vault';

/**
 * Card exports (issue 29 item 2, docs/migration.md "Leaving Tessera (export)"): the vault carries
 * out the export orders two operators approved in the admin service (the queue in Redis is the only
 * channel, as for shred orders, docs/adr/0014). Tokens are read one at a time, opened as a render
 * opens them, written by the import's format writer into an OpenPGP message to the recipient's key
 * as it is produced, and the ciphertext goes to Redis in chunks: memory holds one card, one chunk and
 * the encryption's window, whatever the number of cards. No card data is logged or written in clear.
 */
export interface ExportDeps {
  orders: Pick<RedisExportOrderStore, 'nextQueued' | 'get' | 'replace' | 'dequeue' | 'holdRun' | 'releaseRun'>;
  recipients: Pick<RedisExportRecipientStore, 'get'>;
  files: Pick<RedisExportFileStore, 'clear' | 'append' | 'firstSeen' | 'forgetSeen'>;
  /** The vault's own way to open a merchant's card (Vault.cardForRender): undefined for none of the owner's. */
  cards: { cardForRender(owner: TokenOwner, tokenOrAlias: string): Promise<RenderableCard | undefined> };
  /** For "all tokens": a SCAN of the card records, read raw to pick the merchant's without opening others'. */
  store: Pick<CardStore, 'scanTokens' | 'readRaw'>;
  /** EXPORT_FILE_TTL_SECONDS, in ms: how long the encrypted file stays downloadable. */
  fileTtlMs: number;
  now: () => Date;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  scanBatch?: number;
  /** This vault's name on the lease of the order it writes (one per process). */
  holder?: string;
  /** How long the lease lasts unless renewed; renewed with every chunk and every few hundred cards. */
  leaseMs?: number;
}

const PROCESS_HOLDER = `vault-${process.pid}-${randomBytes(6).toString('hex')}`;
const DEFAULT_LEASE_MS = 60_000;
/** Cards between lease renewals when no chunk was written meanwhile. */
const RENEW_EVERY_CARDS = 500;

/** Ciphertext chunk size in Redis (one list element each). */
export const EXPORT_CHUNK_BYTES = 1024 * 1024;

/** Why an export failed, as the order names it (no card data, no key material). */
class ExportRefused extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/**
 * Carries out the approved export orders on the queue, oldest first, until it is empty or the
 * next is being written by another vault. Answers how many it finished.
 */
export async function runExportOrders(deps: ExportDeps): Promise<number> {
  const holder = deps.holder ?? PROCESS_HOLDER;
  const leaseMs = deps.leaseMs ?? DEFAULT_LEASE_MS;
  let done = 0;
  for (;;) {
    const id = await deps.orders.nextQueued();
    if (id === null) return done;
    const found = await deps.orders.get(id);
    if (found?.order.status !== 'approved' && found?.order.status !== 'running') {
      deps.logger.warn({ exportOrder: id }, 'an export order on the queue is not approved; dropped');
      await deps.orders.dequeue(id);
      continue;
    }
    // Another vault is writing it; one that stopped while writing it lets the lease lapse and this one starts it again.
    if (!(await deps.orders.holdRun(id, holder, leaseMs))) return done;
    try {
      const lease: Lease = {
        lost: false,
        async renew() {
          if (!(await deps.orders.holdRun(id, holder, leaseMs))) {
            lease.lost = true;
            throw new LeaseLost();
          }
        },
      };
      if (!(await carryOut(deps, found.order, found.raw, lease))) return done;
    } finally {
      await deps.orders.releaseRun(id, holder);
    }
    await deps.orders.dequeue(id);
    done++;
  }
}

class LeaseLost extends Error {}

/** The order's lease; `lost` stays set once a renewal failed, whatever error the encryption stream then reports. */
interface Lease {
  lost: boolean;
  renew(): Promise<void>;
}

/** False when the order changed meanwhile or the lease was lost: another vault has it. */
async function carryOut(deps: ExportDeps, order: ExportOrder, raw: string, lease: Lease): Promise<boolean> {
  const running: ExportOrder = { ...order, status: 'running', startedAt: deps.now().toISOString() };
  if (!(await deps.orders.replace(raw, running))) return false;
  if (order.status === 'running') deps.logger.warn({ exportOrder: order.id }, 'card export started again (the vault writing it stopped)');
  let current = JSON.stringify(running);
  const finish = async (next: ExportOrder): Promise<void> => {
    if (await deps.orders.replace(current, next)) current = JSON.stringify(next);
  };
  try {
    // The admin service enforced the two operators; an order that does not show them is not carried out.
    if (order.approvedBy === undefined || order.approvedBy.id === order.requestedBy.id) throw new ExportRefused('order_not_approved');
    const recipientKey = await registeredRecipientKey(deps, order);
    const outcome = await writeExport(deps, order, recipientKey, () => lease.renew());
    const completedAt = deps.now();
    await finish({
      ...running,
      status: 'done',
      completedAt: completedAt.toISOString(),
      expiresAt: new Date(completedAt.getTime() + deps.fileTtlMs).toISOString(),
      ...outcome,
    });
    deps.logger.info(
      {
        exportOrder: order.id,
        merchantId: order.merchantId,
        mode: order.mode,
        format: order.format,
        recipient: order.recipient.fingerprint,
        ...outcome,
      },
      'card export written',
    );
    return true;
  } catch (err) {
    if (lease.lost) {
      deps.logger.warn({ exportOrder: order.id }, 'card export left to another vault (its lease lapsed)');
      return false;
    }
    const reason = err instanceof ExportRefused ? err.reason : 'export_interrupted';
    await deps.files.clear(order.id).catch(() => undefined);
    await finish({ ...running, status: 'failed', completedAt: deps.now().toISOString(), failure: reason });
    deps.logger.error(
      { exportOrder: order.id, merchantId: order.merchantId, reason, err: err instanceof ExportRefused ? undefined : errorName(err) },
      'card export failed',
    );
    return true;
  }
}

/** Only the error's class: a message could carry more than we want in a log line. */
function errorName(err: unknown): string {
  return err instanceof Error ? err.name : 'unknown';
}

/**
 * The recipient's key as registered now: one removed since the request is refused, and one whose
 * fingerprint is not the registered one (the record edited) too.
 */
async function registeredRecipientKey(deps: ExportDeps, order: ExportOrder): Promise<PublicKey> {
  const recipient = await deps.recipients.get(order.merchantId, order.recipient.fingerprint);
  if (recipient === undefined) throw new ExportRefused('export_recipient_not_registered');
  let key: PublicKey;
  try {
    key = await readRecipientKey(recipient.publicKey);
  } catch {
    throw new ExportRefused('recipient_key_unusable');
  }
  if (key.getFingerprint().toUpperCase() !== order.recipient.fingerprint) throw new ExportRefused('recipient_key_mismatch');
  return key;
}

/** The tokens to export: the listed ones, or every card record of the merchant and mode (provisional ones left out). */
async function* tokensOf(deps: ExportDeps, order: ExportOrder): AsyncGenerator<{ token: string; listed: boolean }> {
  if (order.tokens !== undefined) {
    for (const token of order.tokens) yield { token, listed: true };
    return;
  }
  let cursor = '0';
  do {
    const step = await deps.store.scanTokens(cursor, deps.scanBatch ?? 500);
    const first = await deps.files.firstSeen(order.id, step.tokens, deps.fileTtlMs);
    for (const [i, token] of step.tokens.entries()) {
      if (!first[i]) continue;
      const raw = await deps.store.readRaw('card', token);
      if (raw === null) continue;
      let card;
      try {
        card = parseCard(raw);
      } catch {
        continue;
      }
      // A record from before tokens had a mode is opened to learn it (cardForRender refuses the other mode's).
      if (card.merchantId !== order.merchantId || card.provisional === true || (card.mode !== undefined && card.mode !== order.mode))
        continue;
      yield { token, listed: false };
    }
    cursor = step.cursor;
  } while (cursor !== '0');
}

async function writeExport(
  deps: ExportDeps,
  order: ExportOrder,
  recipientKey: PublicKey,
  renew: () => Promise<void>,
): Promise<{ exported: number; missing: number; bytes: number; chunks: number }> {
  const owner: TokenOwner = { merchantId: order.merchantId, mode: order.mode satisfies KeyMode };
  const writer = createRecordWriter(order.format);
  const tokens = tokensOf(deps, order);
  let exported = 0;
  let missing = 0;
  let headerWritten = false;
  /** At most EXPORT_MAX_SELECTED_TOKENS. */
  const listedWritten = new Set<string>();
  const plaintext = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (!headerWritten) {
          headerWritten = true;
          if (writer.header !== '') {
            controller.enqueue(Buffer.from(writer.header, 'utf8'));
            return;
          }
        }
        for (;;) {
          const next = await tokens.next();
          if (next.done === true) {
            controller.close();
            return;
          }
          const card = await deps.cards.cardForRender(owner, next.value.token);
          if (card === undefined) {
            if (next.value.listed) missing++;
            continue;
          }
          // A list may name one card twice, by its token and by an alias: it is written once.
          if (next.value.listed) {
            if (listedWritten.has(card.token)) continue;
            listedWritten.add(card.token);
          }
          const record: ExportedCard = {
            id: card.token,
            number: card.values.number,
            expiryMonth: card.values.expiryMonth,
            expiryYear: card.values.expiryYear,
            holderName: card.values.holderName ?? '',
          };
          exported++;
          if (exported % RENEW_EVERY_CARDS === 0) await renew();
          controller.enqueue(Buffer.from(writer.write(record), 'utf8'));
          return;
        }
      },
    },
    { highWaterMark: 1 },
  );
  const encrypted = (await openpgp.encrypt({
    message: await openpgp.createMessage({ binary: plaintext, format: 'binary' }),
    encryptionKeys: recipientKey,
    format: 'binary',
  })) as ReadableStream<Uint8Array>;

  await deps.files.clear(order.id);
  const reader = encrypted.getReader();
  let pending: Buffer[] = [];
  let size = 0;
  let bytes = 0;
  let chunks = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (!done) {
      pending.push(Buffer.from(value));
      size += value.byteLength;
    }
    if ((done && size > 0) || size >= EXPORT_CHUNK_BYTES) {
      const chunk = Buffer.concat(pending);
      await renew();
      await deps.files.append(order.id, chunk, deps.fileTtlMs);
      bytes += chunk.byteLength;
      chunks++;
      pending = [];
      size = 0;
    }
    if (done) {
      await deps.files.forgetSeen(order.id);
      return { exported, missing, bytes, chunks };
    }
  }
}

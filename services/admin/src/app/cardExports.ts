import { z } from 'zod';
import { TesseraError } from '@tessera/common';
import {
  EXPORT_FORMATS,
  EXPORT_MAX_SELECTED_TOKENS,
  EXPORT_MODES,
  type AuditLog,
  type ExportOrder,
  type ExportRecipient,
  type RedisExportFileStore,
  type RedisExportOrderStore,
  type RedisExportRecipientStore,
} from '@tessera/merchant-data';
import { readRecipientKey } from '../domain/recipientKeys';
import { auditAs } from './caller';
import { merchantIdSchema } from './merchants';
import {
  approveOrder,
  cancelOrder,
  checkTwoOperatorCaller,
  getOrder,
  listOrders,
  operatorRef,
  type OrderKind,
  type TwoOperatorCaller,
} from './twoOperatorOrders';

/**
 * Card exports (issue 29 item 2, docs/migration.md "Leaving Tessera (export)"): a merchant's cards
 * leave Tessera only as a file OpenPGP-encrypted to a recipient key a platform operator registered
 * for that merchant (its fingerprint shown, to be checked with the recipient), and only when two
 * platform operators with a second factor agree (one requests, another approves). The approved order
 * goes on the vault's queue; this service never talks to the vault and only ever holds the
 * ciphertext, which it hands out for download. Everything is audited; nothing here is card data.
 */
export interface CardExportDeps {
  orders: Pick<RedisExportOrderStore, 'create' | 'get' | 'list' | 'replace' | 'countRequest'>;
  recipients: Pick<RedisExportRecipientStore, 'register' | 'get' | 'list' | 'remove'>;
  files: Pick<RedisExportFileStore, 'chunkCount' | 'chunk'>;
  audit: Pick<AuditLog, 'append'>;
  /** EXPORT_MAX_PER_MERCHANT_PER_DAY: export requests per merchant per UTC day (cancelled ones count). */
  maxPerMerchantPerDay: number;
  now: () => Date;
}

const EXPORT: OrderKind = { act: 'Exporting cards', notFound: 'export_order_not_found', notPending: 'export_order_not_pending' };

export const FINGERPRINT_PATTERN = /^[0-9A-F]{40}$|^[0-9A-F]{64}$/;
const fingerprintSchema = z
  .string({ error: '"fingerprint" must be the key\'s fingerprint, 40 or 64 hex digits.' })
  .transform((v) => v.replace(/\s+/g, '').toUpperCase())
  .pipe(z.string().regex(FINGERPRINT_PATTERN, { error: '"fingerprint" must be the key\'s fingerprint, 40 or 64 hex digits.' }));

export const recipientRegistrationSchema = z.strictObject({
  label: z
    .string({ error: '"label" must be a string of 1-100 characters.' })
    .trim()
    .min(1, { error: '"label" must be a string of 1-100 characters.' })
    .max(100, { error: '"label" must be a string of 1-100 characters.' })
    .meta({ description: 'Who the recipient is, for the operators: "Acme PSP, migration team".' }),
  publicKey: z
    .string({ error: '"publicKey" must be an armored OpenPGP public key.' })
    .min(1, { error: '"publicKey" must be an armored OpenPGP public key.' })
    .max(64 * 1024, { error: '"publicKey" must be at most 64 KiB.' })
    .meta({ description: 'The recipient\'s armored OpenPGP public key ("-----BEGIN PGP PUBLIC KEY BLOCK-----").' }),
});
export type RecipientRegistration = z.output<typeof recipientRegistrationSchema>;

export const recipientPathSchema = z.object({
  merchantId: merchantIdSchema(),
  fingerprint: z.string().regex(FINGERPRINT_PATTERN, { error: 'No such recipient.' }),
});

const tokenSchema = z.string().regex(/^[A-Za-z0-9._:-]{1,200}$/, { error: '"tokens" must list tokens (or aliases) of the merchant.' });

export const exportRequestSchema = z.strictObject({
  mode: z
    .enum(EXPORT_MODES, { error: '"mode" must be "test" or "live".' })
    .meta({ description: "Which of the merchant's modes to export." }),
  format: z.enum(EXPORT_FORMATS, { error: '"format" must be "jsonl", "csv" or "stripe".' }).meta({
    description: "The file's layout: the ones the card import reads (docs/migration.md).",
  }),
  recipient: fingerprintSchema.meta({ description: 'Fingerprint of a recipient registered for this merchant.' }),
  tokens: z
    .array(tokenSchema)
    .min(1, { error: '"tokens" must list 1-10000 tokens, or be left out for all of them.' })
    .max(EXPORT_MAX_SELECTED_TOKENS, { error: '"tokens" must list 1-10000 tokens, or be left out for all of them.' })
    .optional()
    .meta({ description: 'The tokens (or aliases) to export; left out: every token of the merchant and mode.' }),
  reason: z
    .string({ error: '"reason" must be a string of 1-500 characters.' })
    .trim()
    .min(1, { error: '"reason" must be a string of 1-500 characters.' })
    .max(500, { error: '"reason" must be a string of 1-500 characters.' }),
});
export type ExportRequestInput = z.output<typeof exportRequestSchema>;

export const exportOrderPathSchema = z.object({
  orderId: z.string({ error: '"orderId" must be a string.' }).regex(/^exp_[A-Za-z0-9_-]{16}$/, { error: 'No such export order.' }),
});

/** A recipient as listed: everything but who may see it is public (it is a public key). */
export type RecipientView = ExportRecipient;

export async function registerRecipient(
  deps: CardExportDeps,
  caller: TwoOperatorCaller,
  merchantId: string,
  input: RecipientRegistration,
): Promise<RecipientView> {
  checkTwoOperatorCaller(caller, EXPORT);
  const facts = await readRecipientKey(input.publicKey, deps.now());
  if (facts === undefined) throw new TesseraError('export_recipient_key_invalid', { param: 'publicKey' });
  const recipient: ExportRecipient = {
    ...facts,
    label: input.label,
    registeredBy: operatorRef(caller),
    registeredAt: deps.now().toISOString(),
  };
  if (!(await deps.recipients.register(merchantId, recipient))) throw new TesseraError('export_recipient_exists');
  await auditAs(deps, caller, {
    action: 'merchant.export_recipient_registered',
    merchantId,
    details: { fingerprint: recipient.fingerprint, label: recipient.label, algorithm: recipient.algorithm },
  });
  return recipient;
}

export async function listRecipients(deps: CardExportDeps, caller: TwoOperatorCaller, merchantId: string): Promise<RecipientView[]> {
  if (caller.merchantId !== null)
    throw new TesseraError('merchant_forbidden', { message: 'Only platform operators see export recipients.' });
  return deps.recipients.list(merchantId);
}

export async function removeRecipient(
  deps: CardExportDeps,
  caller: TwoOperatorCaller,
  merchantId: string,
  fingerprint: string,
): Promise<void> {
  checkTwoOperatorCaller(caller, EXPORT);
  const existing = await deps.recipients.get(merchantId, fingerprint);
  if (existing === undefined || !(await deps.recipients.remove(merchantId, fingerprint)))
    throw new TesseraError('export_recipient_not_found');
  await auditAs(deps, caller, {
    action: 'merchant.export_recipient_removed',
    merchantId,
    details: { fingerprint, label: existing.label },
  });
}

/** Seconds until the next UTC midnight, when the day's count starts again. */
function secondsToNextUtcDay(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

export async function requestExport(
  deps: CardExportDeps,
  caller: TwoOperatorCaller,
  merchantId: string,
  input: ExportRequestInput,
): Promise<ExportOrder> {
  checkTwoOperatorCaller(caller, EXPORT);
  const recipient = await deps.recipients.get(merchantId, input.recipient);
  if (recipient === undefined) throw new TesseraError('export_recipient_not_registered', { param: 'recipient' });
  const now = deps.now();
  if ((await deps.orders.countRequest(merchantId, now)) > deps.maxPerMerchantPerDay) {
    throw new TesseraError('export_rate_limited', { retryAfterSeconds: secondsToNextUtcDay(now) });
  }
  const order = await deps.orders.create(
    {
      merchantId,
      mode: input.mode,
      format: input.format,
      recipient: { fingerprint: recipient.fingerprint, label: recipient.label },
      reason: input.reason,
      requestedBy: operatorRef(caller),
      ...(input.tokens === undefined ? {} : { tokens: input.tokens }),
    },
    now,
  );
  await auditAs(deps, caller, {
    action: 'merchant.export_requested',
    merchantId,
    details: {
      exportOrderId: order.id,
      mode: order.mode,
      format: order.format,
      recipient: recipient.fingerprint,
      // How many, never which: the audit log is read more widely than the order.
      tokens: input.tokens === undefined ? 'all' : input.tokens.length,
      reason: order.reason,
    },
  });
  return order;
}

export async function approveExport(deps: CardExportDeps, caller: TwoOperatorCaller, orderId: string): Promise<ExportOrder> {
  const approved = await approveOrder(deps.orders, EXPORT, caller, orderId, deps.now());
  await auditAs(deps, caller, {
    action: 'merchant.export_approved',
    merchantId: approved.merchantId,
    details: { exportOrderId: approved.id, recipient: approved.recipient.fingerprint, requestedBy: approved.requestedBy.email },
  });
  return approved;
}

export async function cancelExport(deps: CardExportDeps, caller: TwoOperatorCaller, orderId: string): Promise<ExportOrder> {
  const cancelled = await cancelOrder(deps.orders, EXPORT, caller, orderId);
  await auditAs(deps, caller, {
    action: 'merchant.export_cancelled',
    merchantId: cancelled.merchantId,
    details: { exportOrderId: cancelled.id },
  });
  return cancelled;
}

export async function getExportOrder(deps: CardExportDeps, caller: TwoOperatorCaller, orderId: string): Promise<ExportOrder> {
  return getOrder(deps.orders, EXPORT, caller, orderId);
}

export async function listExportOrders(deps: CardExportDeps, caller: TwoOperatorCaller): Promise<ExportOrder[]> {
  return listOrders(deps.orders, caller);
}

/**
 * The finished export's file, ciphertext only, chunk by chunk (memory holds one chunk). Only a
 * platform operator with a second factor downloads it, and the download is audited before the
 * first byte leaves.
 */
export async function openExportFile(
  deps: CardExportDeps,
  caller: TwoOperatorCaller,
  orderId: string,
): Promise<{ order: ExportOrder; chunks: AsyncIterable<Buffer> }> {
  checkTwoOperatorCaller(caller, EXPORT);
  const order = await getOrder(deps.orders, EXPORT, caller, orderId);
  const count = order.status === 'done' ? await deps.files.chunkCount(orderId) : 0;
  if (count === 0 || count !== order.chunks) throw new TesseraError('export_file_unavailable');
  await auditAs(deps, caller, {
    action: 'merchant.export_downloaded',
    merchantId: order.merchantId,
    details: { exportOrderId: order.id, recipient: order.recipient.fingerprint, bytes: order.bytes ?? 0 },
  });
  const files = deps.files;
  async function* chunks(): AsyncGenerator<Buffer> {
    for (let i = 0; i < count; i++) {
      const chunk = await files.chunk(orderId, i);
      // Expired while being read: the download stops short, which the recipient's OpenPGP tool reports.
      if (chunk === null) throw new TesseraError('export_file_unavailable');
      yield chunk;
    }
  }
  return { order, chunks: chunks() };
}

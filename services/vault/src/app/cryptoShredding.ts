import { TesseraError, type KeyMode, type Logger } from '@tessera/common';
import { emitEvent, type EmissionObservers, type RedisShredOrderStore, type ShredMode, type ShredOrder } from '@tessera/merchant-data';
import { aliasDigestOf, openFingerprintKey } from '../domain/fingerprint';
import { merchantKekIdOf } from '../domain/merchantKeys';
import type { CardStore } from '../store/cardStore';
import type { CaKeyStore } from '../store/caKeyStore';
import { parseCard } from '../store/records';
import type { EventRecorder } from './eventSweeps';
import { legacyModeOf } from './keyRotation';
import type { MerchantKekStore, MerchantKeyRings } from './merchantKeys';

/**
 * Crypto-shredding (issue 29, docs/SECURITY.md "Per-merchant keys and crypto-shredding"): the
 * merchant's KEK of each mode is destroyed first, so from that moment every record under it is
 * unreadable (the vault answers token_not_found); only then are its records swept (card, CVV,
 * aliases and their index, fingerprint index entry), which may take a while and may be resumed.
 */
export interface ShredDeps {
  store: Pick<CardStore, 'scanTokens' | 'readRaw' | 'delete' | 'aliasesOf' | 'releaseAliases' | 'releaseFingerprint' | 'getFingerprintKey'>;
  keks: Pick<MerchantKekStore, 'shredMerchantKek' | 'getMerchantKek'>;
  rings: Pick<MerchantKeyRings, 'forget' | 'root'>;
  now: () => Date;
  batchSize?: number;
}

export function modesOf(mode: ShredMode): KeyMode[] {
  return mode === 'all' ? ['test', 'live'] : [mode];
}

/** Step 1: the keys go. This replica forgets them at once; the others within MERCHANT_KEK_CACHE_MS. */
export async function destroyMerchantKeys(deps: ShredDeps, merchantId: string, modes: readonly KeyMode[]): Promise<Date> {
  const at = deps.now();
  for (const mode of modes) {
    await deps.keks.shredMerchantKek(merchantId, mode, at.toISOString());
    deps.rings.forget(merchantId, mode);
  }
  return at;
}

/**
 * Step 1 too, for mode "all": the merchant's forward-proxy CA goes with its keys. Its private key is
 * wrapped under the root ring (one CA serves both modes), so destroying the merchant KEKs would not
 * reach it; deleting the record does (the merchant's next forward-proxy use makes a new CA).
 */
export async function destroyMerchantCa(deps: Pick<ShredOrderDeps, 'cas' | 'caCache'>, merchantId: string): Promise<boolean> {
  const deleted = await deps.cas.delete(merchantId);
  deps.caCache?.forget(merchantId);
  return deleted;
}

/**
 * Step 2: every record of the merchant in those modes is deleted, except those under a key made
 * after the shred (the merchant's new life, if its keys still take tokens). A full SCAN of the
 * card records (records carry the {token} hash tag, not the merchant's); safe to run again after a
 * failure. A record written before tokens had a mode is opened with the root ring to learn its mode.
 */
export async function sweepMerchantRecords(deps: ShredDeps, merchantId: string, modes: readonly KeyMode[]): Promise<number> {
  const live = new Set<string>();
  for (const mode of modes) {
    const { stored } = await deps.keks.getMerchantKek(merchantId, mode);
    if (stored !== null) live.add(merchantKekIdOf(stored));
  }
  const storedFingerprintKey = await deps.store.getFingerprintKey();
  const fingerprintKey = storedFingerprintKey === null ? undefined : openFingerprintKey(deps.rings.root, storedFingerprintKey);
  let swept = 0;
  let cursor = '0';
  try {
    do {
      const step = await deps.store.scanTokens(cursor, deps.batchSize ?? 200);
      for (const token of step.tokens) {
        const raw = await deps.store.readRaw('card', token);
        if (raw === null) continue;
        let card;
        let mode: KeyMode;
        try {
          card = parseCard(raw);
          if (card.merchantId !== merchantId || live.has(card.sealed.keyId)) continue;
          mode = card.mode ?? (modes.length === 2 ? 'live' : legacyModeOf(deps.rings.root, token, card));
        } catch {
          continue;
        }
        if (!modes.includes(mode)) continue;
        const aliases = Object.values(await deps.store.aliasesOf(token));
        if (aliases.length > 0 && fingerprintKey !== undefined) {
          const digests = aliases.map((alias) => aliasDigestOf(fingerprintKey, merchantId, mode, alias));
          await deps.store.releaseAliases(merchantId, mode, digests, token);
        }
        if (await deps.store.delete(token)) swept++;
        if (card.fingerprint !== undefined) await deps.store.releaseFingerprint(card.fingerprint, token);
      }
      cursor = step.cursor;
    } while (cursor !== '0');
  } finally {
    fingerprintKey?.fill(0);
  }
  return swept;
}

export interface ShredOrderDeps extends ShredDeps, EmissionObservers {
  orders: Pick<RedisShredOrderStore, 'nextQueued' | 'get' | 'replace' | 'dequeue'>;
  /**
   * The merchants' forward-proxy CAs (tessera:ca:*): a CA is per merchant, not per mode, and its key
   * is sealed under the root ring, so a shred of mode "all" deletes the record itself.
   */
  cas: Pick<CaKeyStore, 'delete'>;
  /** This replica's opened CA keys (app/merchantCa.ts), dropped with the record; absent in the CLI. */
  caCache?: { forget(merchantId: string): void };
  recorder: EventRecorder;
  logger: Logger;
}

/**
 * Carries out the approved orders on the queue, oldest first, until it is empty. Each step is
 * written to the order before the next, so a vault that stops half-way resumes the order (a key
 * already destroyed is not destroyed again: a new one made since belongs to the merchant's new life).
 */
export async function runShredOrders(deps: ShredOrderDeps): Promise<number> {
  let done = 0;
  for (;;) {
    const id = await deps.orders.nextQueued();
    if (id === null) return done;
    const found = await deps.orders.get(id);
    if (found === undefined || (found.order.status !== 'approved' && found.order.status !== 'shredding')) {
      // Not an approved order (unreadable, or not approved through the admin service's script): never carried out.
      deps.logger.warn({ shredOrder: id }, 'a shred order on the queue is not approved; dropped');
      await deps.orders.dequeue(id);
      continue;
    }
    await carryOut(deps, found.order, found.raw);
    await deps.orders.dequeue(id);
    done++;
  }
}

async function carryOut(deps: ShredOrderDeps, order: ShredOrder, raw: string): Promise<void> {
  const modes = modesOf(order.mode);
  let current = order;
  let currentRaw = raw;
  if (order.status === 'approved') {
    const at = await destroyMerchantKeys(deps, order.merchantId, modes);
    // Before the order says "shredding", so a vault that stops in between deletes it on resuming.
    const caDeleted = order.mode === 'all' ? await destroyMerchantCa(deps, order.merchantId) : false;
    deps.logger.warn(
      { shredOrder: order.id, merchantId: order.merchantId, mode: order.mode, forwardProxyCaDeleted: caDeleted },
      'merchant keys destroyed (crypto-shredding)',
    );
    current = { ...order, status: 'shredding', keyDestroyedAt: at.toISOString() };
    if (!(await deps.orders.replace(currentRaw, current)))
      throw new TesseraError('service_unavailable', { message: 'A shred order changed meanwhile.' });
    currentRaw = JSON.stringify(current);
  }
  const swept = await sweepMerchantRecords(deps, order.merchantId, modes);
  const completed: ShredOrder = {
    ...current,
    status: 'done',
    completedAt: deps.now().toISOString(),
    tokensSwept: (current.tokensSwept ?? 0) + swept,
  };
  await deps.orders.replace(currentRaw, completed);
  deps.logger.info({ shredOrder: order.id, merchantId: order.merchantId, mode: order.mode, tokensSwept: swept }, 'merchant records swept');
  const keyDestroyedAt = Math.floor(Date.parse(completed.keyDestroyedAt ?? completed.completedAt ?? '') / 1000);
  for (const mode of modes) {
    await emitEvent(
      deps.recorder,
      {
        type: 'merchant.shredded',
        merchantId: order.merchantId,
        mode,
        object: { id: order.id, keyDestroyedAt: Number.isFinite(keyDestroyedAt) ? keyDestroyedAt : 0, tokensSwept: swept },
        once: `merchant.shredded:${order.id}:${mode}`,
      },
      deps,
    );
  }
}

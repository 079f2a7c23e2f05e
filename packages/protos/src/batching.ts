import { status as grpcStatus } from '@grpc/grpc-js';

/** How long a peer that does not know a batch RPC (an older version mid-upgrade) is sent single calls. */
const BATCH_UNSUPPORTED_RETRY_MS = 60_000;

/** The gRPC status of a failed call, also when it was already mapped (a TesseraError keeps it as its cause). */
function grpcCode(err: unknown): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : (err as { cause?: { code?: unknown } } | null)?.cause?.code;
}

export interface BatchingOptions<Item, Result> {
  /** The most items in one batch call; more waiting items go in further calls at once. */
  maxBatch: number;
  /**
   * With `weigh`: the most bytes (as weighed) in one batch call, so that a batch of large bodies
   * stays well inside the gRPC message limit. An item too heavy for any batch goes alone.
   */
  maxBatchBytes?: number;
  weigh?: (item: Item) => number;
  /** The plain unary call, for a lone item and for a peer without the batch RPC. */
  sendOne(item: Item): Promise<Result>;
  /**
   * The batch RPC. It hands each item's outcome to `deliver` (by index, in any order, as soon as
   * it is known; an Error refuses that item alone) and settles when the call is over. A rejection
   * refuses every item not yet delivered with `failed(err)`, except UNIMPLEMENTED, which sends
   * them again one by one; an item the call never delivered is refused as an internal error.
   */
  sendBatch(items: Item[], deliver: (index: number, outcome: Result | Error) => void): Promise<void>;
  /**
   * The error each item of a failed batch call gets; by default the batch call's own rejection
   * (a TesseraError when sendBatch calls through `call`).
   */
  failed?(err: unknown): Promise<never>;
}

interface Pending<Item, Result> {
  item: Item;
  resolve: (result: Result) => void;
  reject: (err: unknown) => void;
}

/**
 * Calls that reach this point in the same turn of the event loop go to the peer as one batch
 * call. Under load that is what makes a hop between services cheap: one gRPC call (and on the
 * peer one store round trip) per group instead of per item. A lone call waits for nobody: it is
 * sent at the end of the current turn (setImmediate), as a plain unary call, and every item still
 * gets its own answer or refusal.
 */
export function createBatcher<Item, Result>(opts: BatchingOptions<Item, Result>): (item: Item) => Promise<Result> {
  let queue: Array<Pending<Item, Result>> = [];
  let batchUnsupportedUntil = 0;

  const sendOne = (pending: Pending<Item, Result>): void => {
    opts.sendOne(pending.item).then(pending.resolve, pending.reject);
  };

  const sendBatch = (batch: Array<Pending<Item, Result>>): void => {
    const delivered = new Array<boolean>(batch.length).fill(false);
    const deliver = (index: number, outcome: Result | Error): void => {
      const pending = batch[index];
      if (pending === undefined || delivered[index]) return;
      delivered[index] = true;
      if (outcome instanceof Error) pending.reject(outcome);
      else pending.resolve(outcome);
    };
    const undelivered = (): Array<Pending<Item, Result>> => batch.filter((_, i) => !delivered[i]);
    opts
      .sendBatch(
        batch.map((pending) => pending.item),
        deliver,
      )
      .then(
        () => undelivered().forEach((pending) => pending.reject(new Error('the batch call ended without answering this item'))),
        (err: unknown) => {
          const rest = undelivered();
          if (grpcCode(err) === grpcStatus.UNIMPLEMENTED) {
            batchUnsupportedUntil = Date.now() + BATCH_UNSUPPORTED_RETRY_MS;
            rest.forEach(sendOne);
            return;
          }
          (opts.failed ?? ((e: unknown) => Promise.reject(e)))(err).catch((error: unknown) =>
            rest.forEach((pending) => pending.reject(error)),
          );
        },
      );
  };

  const flush = (): void => {
    const waiting = queue;
    queue = [];
    const send = (batch: Array<Pending<Item, Result>>): void => {
      if (batch.length === 1 || Date.now() < batchUnsupportedUntil) batch.forEach(sendOne);
      else sendBatch(batch);
    };
    let batch: Array<Pending<Item, Result>> = [];
    let batchBytes = 0;
    for (const pending of waiting) {
      const bytes = opts.weigh?.(pending.item) ?? 0;
      if (batch.length > 0 && (batch.length >= opts.maxBatch || batchBytes + bytes > (opts.maxBatchBytes ?? Infinity))) {
        send(batch);
        batch = [];
        batchBytes = 0;
      }
      batch.push(pending);
      batchBytes += bytes;
    }
    if (batch.length > 0) send(batch);
  };

  return (item) =>
    new Promise<Result>((resolve, reject) => {
      if (queue.length === 0) setImmediate(flush);
      queue.push({ item, resolve, reject });
    });
}

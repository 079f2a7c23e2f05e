import { status as grpcStatus } from '@grpc/grpc-js';

/** How long a peer that does not know a batch RPC (an older version mid-upgrade) is sent single calls. */
const BATCH_UNSUPPORTED_RETRY_MS = 60_000;

export interface BatchingOptions<Item, Result> {
  /** The most items in one batch call; more waiting items go in further calls at once. */
  maxBatch: number;
  /** The plain unary call, for a lone item and for a peer without the batch RPC. */
  sendOne(item: Item): Promise<Result>;
  /**
   * The batch RPC: one outcome per item, in order (an Error refuses that item alone). A rejection
   * refuses every item with `failed(err)`, except UNIMPLEMENTED, which falls back to sendOne.
   */
  sendBatch(items: Item[]): Promise<Array<Result | Error>>;
  /** The error each item of a failed batch call gets (e.g. the gRPC error mapped for callers). */
  failed(err: unknown): Promise<never>;
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
    opts.sendBatch(batch.map((pending) => pending.item)).then(
      (outcomes) => {
        batch.forEach((pending, i) => {
          const outcome = outcomes[i];
          if (outcome === undefined) pending.reject(new Error(`batch answer without item ${i}`));
          else if (outcome instanceof Error) pending.reject(outcome);
          else pending.resolve(outcome);
        });
      },
      (err: unknown) => {
        if ((err as { code?: unknown } | null)?.code === grpcStatus.UNIMPLEMENTED) {
          batchUnsupportedUntil = Date.now() + BATCH_UNSUPPORTED_RETRY_MS;
          batch.forEach(sendOne);
          return;
        }
        opts.failed(err).catch((error: unknown) => batch.forEach((pending) => pending.reject(error)));
      },
    );
  };

  const flush = (): void => {
    const waiting = queue;
    queue = [];
    for (let start = 0; start < waiting.length; start += opts.maxBatch) {
      const batch = waiting.slice(start, start + opts.maxBatch);
      if (batch.length === 1 || Date.now() < batchUnsupportedUntil) batch.forEach(sendOne);
      else sendBatch(batch);
    }
  };

  return (item) =>
    new Promise<Result>((resolve, reject) => {
      if (queue.length === 0) setImmediate(flush);
      queue.push({ item, resolve, reject });
    });
}

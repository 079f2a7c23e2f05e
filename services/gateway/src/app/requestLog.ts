import { Counter, type Registry } from 'prom-client';
import { createLogThrottle, type Logger } from '@tessera/common';
import { buildRequestLogRecord, type MerchantRecord, type RequestFacts, type RequestLogWriter } from '@tessera/merchant-data';

/**
 * The merchant's request log, writing side: every /v1 request is recorded (RequestLogRecorder,
 * called by the transport once an answer went out). The admin service reads it (its
 * app/requestLog.ts) for the admin API and the dashboard.
 */

export interface RequestLogRecorderOptions {
  /** Requests waiting to be written; beyond it new ones are dropped (and counted), never waited for. */
  maxBuffered: number;
  /** Records per batch sent to Redis. */
  maxBatch?: number;
  metrics?: Registry;
  now?: () => Date;
}

/**
 * Writing the log must neither delay nor fail the request it describes. `record` only puts the
 * request's facts into a bounded buffer (the answer has already gone out); building the entries
 * (card-number masking) and writing them happen on a later turn of the event loop (the check
 * phase, where the call's detokenization audit entry is queued too, so that both share one Redis
 * write: see merchant-data's store/detokenizationLog.ts), one batch in flight at a time, so a slow Redis makes
 * batches bigger, not requests slower. When the buffer is full or Redis fails, entries are
 * dropped and counted in tessera_request_log_dropped_total{reason}.
 */
export class RequestLogRecorder {
  private buffer: RequestFacts[] = [];
  private scheduled = false;
  private inFlight: Promise<void> | undefined;
  private readonly maxBatch: number;
  private readonly now: () => Date;
  private readonly dropped: Counter<'reason'> | undefined;
  private readonly written: Counter | undefined;
  /** One line every 10 s is enough to notice a store that keeps failing. */
  private readonly mayLogStoreError = createLogThrottle();

  constructor(
    private readonly store: RequestLogWriter,
    private readonly logger: Logger,
    private readonly options: RequestLogRecorderOptions,
  ) {
    this.maxBatch = options.maxBatch ?? 500;
    this.now = options.now ?? (() => new Date());
    if (options.metrics) {
      this.dropped = new Counter({
        name: 'tessera_request_log_dropped_total',
        help: 'Request log entries not written: buffer_full (Redis slower than the traffic) or store_unavailable',
        labelNames: ['reason'],
        registers: [options.metrics],
      });
      this.written = new Counter({
        name: 'tessera_request_log_written_total',
        help: 'Request log entries written',
        registers: [options.metrics],
      });
    }
  }

  /** Never throws, never waits. */
  record(facts: RequestFacts): void {
    if (this.buffer.length >= this.options.maxBuffered) {
      this.dropped?.inc({ reason: 'buffer_full' });
      return;
    }
    this.buffer.push(facts);
    this.schedule();
  }

  /** Entries waiting to be written. */
  get pending(): number {
    return this.buffer.length;
  }

  /** Writes what is buffered (shutdown, tests). */
  async flush(): Promise<void> {
    while (this.inFlight !== undefined || this.buffer.length > 0) {
      await (this.inFlight ?? this.writeBatch());
    }
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight !== undefined) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.inFlight === undefined && this.buffer.length > 0) void this.writeBatch();
    });
  }

  private writeBatch(): Promise<void> {
    const taken = this.buffer.splice(0, this.maxBatch);
    const run = async (): Promise<void> => {
      let batch: MerchantRecord[] = [];
      try {
        batch = taken.map((facts) => ({ merchantId: facts.merchantId, record: buildRequestLogRecord(facts) }));
        const failed = await this.store.append(batch, this.now());
        if (failed > 0) this.dropped?.inc({ reason: 'store_unavailable' }, failed);
        this.written?.inc(batch.length - failed);
      } catch (err) {
        this.dropped?.inc({ reason: 'store_unavailable' }, taken.length);
        // Ids only (the error is Redis's).
        if (this.mayLogStoreError()) this.logger.error({ err, dropped: taken.length }, 'could not write the request log (entries dropped)');
      }
    };
    const flight = run().finally(() => {
      this.inFlight = undefined;
      if (this.buffer.length > 0) this.schedule();
    });
    this.inFlight = flight;
    return flight;
  }
}

/**
 * The merchants' request log as a gateway writes it: after each answer, in batches. Undefined when
 * REQUEST_LOG_MAX_ENTRIES is 0.
 */
export function openRequestLog(
  store: RequestLogWriter,
  settings: { maxEntries: number; maxBuffered: number },
  logger: Logger,
  metrics: Registry,
): RequestLogRecorder | undefined {
  if (settings.maxEntries === 0) return undefined;
  return new RequestLogRecorder(store, logger, { maxBuffered: settings.maxBuffered, metrics });
}

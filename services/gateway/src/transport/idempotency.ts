import type { NextFunction, Request, Response } from 'express';
import { TesseraError, type Logger } from '@tessera/common';
import {
  answerBytes,
  idempotencyKeys,
  idempotencyScope,
  isReplayable,
  isValidIdempotencyKey,
  openResponse,
  quotaOwner,
  replayableHeaders,
  requestFingerprint,
  sealResponse,
  storableIdempotencyKey,
  usageWindow,
} from '../domain/idempotency';
import { retryAfterSeconds } from '@tessera/edge';
import { isStaleClaim, type FinalRecord, type IdempotencyStore } from '../store/idempotencyStore';
import { apiKeyOf, contextOf, routeOf } from '@tessera/edge';

export interface IdempotencyOptions {
  store: IdempotencyStore;
  pepper: string;
  /** How long an answer is replayed (IDEMPOTENCY_TTL_SECONDS). */
  ttlMs: number;
  /** How long a claim blocks duplicates if its request never finishes (the process died). */
  lockTtlMs: number;
  /**
   * What a retry gets once a claim is past lockTtlMs without an answer (its gateway stopped
   * mid-request): 'run_again' runs the request again; 'outcome_unknown' answers 502
   * psp_outcome_unknown and keeps that answer, for routes whose request may have reached a PSP.
   */
  whenAbandoned: 'run_again' | 'outcome_unknown';
  /**
   * Largest answer kept for replay, body and header bytes (IDEMPOTENCY_MAX_STORED_BYTES). A larger
   * one goes to the caller unchanged; only its status is kept, and a retry is refused with
   * 409 idempotent_replay_unavailable instead of being run again.
   */
  maxStoredBytes: number;
  /** Bytes of records one merchant may hold per mode (IDEMPOTENCY_MAX_BYTES_PER_MERCHANT); 0: no limit. */
  maxBytesPerMerchant: number;
  logger: Logger;
}

export const REPLAYED_HEADER = 'idempotent-replayed';

function toBuffer(chunk: unknown, encoding?: unknown): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk);
  return Buffer.from(String(chunk), typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
}

/**
 * Runs after authentication and body parsing, before the route. Without an Idempotency-Key it
 * does nothing. With one: replays the stored answer, refuses a reused key (409), or claims the
 * key and records the route's answer as it is written (before the last byte leaves, so a retry
 * that arrives right after the answer finds it).
 */
export function idempotency(opts: IdempotencyOptions) {
  const keys = idempotencyKeys(opts.pepper);
  const withKey = async (req: Request, res: Response, next: NextFunction, header: string | string[]): Promise<void> => {
    if (typeof header !== 'string' || !isValidIdempotencyKey(header)) {
      throw new TesseraError('parameter_invalid', {
        param: 'Idempotency-Key',
        message: 'The Idempotency-Key header must be 1 to 255 printable ASCII characters.',
      });
    }
    const apiKey = apiKeyOf(res);
    const scope = idempotencyScope(apiKey.merchantId, apiKey.mode, storableIdempotencyKey(keys.fingerprint, header));
    const owner = quotaOwner(apiKey.merchantId, apiKey.mode);
    const fingerprint = requestFingerprint(keys.fingerprint, `${req.method} ${routeOf(req) ?? req.path}`, req.body);
    const now = Date.now();
    const window = usageWindow(now, opts.ttlMs);
    const found = await opts.store.claim(scope, fingerprint, {
      lockTtlMs: opts.lockTtlMs,
      keepMs: opts.ttlMs,
      takeOverStale: opts.whenAbandoned === 'run_again',
      now,
      quota: { owner, maxBytes: opts.maxBytesPerMerchant, window },
    });
    if (found === 'over_quota') {
      opts.logger.warn(
        { requestId: contextOf(res).requestId, merchantId: apiKey.merchantId, mode: apiKey.mode },
        'idempotency quota reached: new Idempotency-Keys refused until older answers expire',
      );
      throw new TesseraError('idempotency_quota_exceeded', {
        param: 'Idempotency-Key',
        // The soonest the merchant's count can shrink: when the current slice of the window ends.
        retryAfterSeconds: retryAfterSeconds(window.currentEndsAt - now),
      });
    }
    let abandoned = false;
    if (found.state !== 'claimed') {
      if (found.fingerprint !== fingerprint) throw new TesseraError('idempotency_key_reused', { param: 'Idempotency-Key' });
      abandoned = isStaleClaim(found, now);
    }
    if (found.state !== 'claimed' && !abandoned) {
      if (found.state === 'in_progress') {
        throw new TesseraError('idempotency_in_progress', { param: 'Idempotency-Key', retryAfterSeconds: 1 });
      }
      if (found.state === 'too_large') {
        const { status } = openResponse(keys.seal, scope, found.sealedStatus);
        throw new TesseraError('idempotent_replay_unavailable', {
          param: 'Idempotency-Key',
          message:
            `The first answer to this Idempotency-Key (status ${status}) was too large to keep for replays, so it cannot be ` +
            'replayed. The request was not run again: find out its outcome (for a proxy call, from the PSP) before retrying under a new key.',
        });
      }
      const stored = openResponse(keys.seal, scope, found.sealed);
      res.sendDate = false;
      for (const [name, value] of stored.headers) res.setHeader(name, value);
      res.setHeader(REPLAYED_HEADER, 'true');
      res.statusCode = stored.status;
      res.end(stored.body);
      return;
    }

    // Only as much of the body as could be kept is held; past the cap just its size is counted.
    let chunks: Buffer[] = [];
    let bodyBytes = 0;
    const capture = (chunk: unknown, encoding: unknown): void => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
      const buffer = toBuffer(chunk, encoding);
      bodyBytes += buffer.length;
      if (bodyBytes <= opts.maxStoredBytes) chunks.push(buffer);
      else chunks = [];
    };
    const finalRecord = (status: number): FinalRecord => {
      const headers = replayableHeaders(res.getHeaders());
      if (answerBytes(headers, bodyBytes) > opts.maxStoredBytes) {
        opts.logger.warn(
          { requestId: contextOf(res).requestId, status, bytes: bodyBytes, maxStoredBytes: opts.maxStoredBytes },
          'answer too large to keep for Idempotency-Key replays: only its status is kept',
        );
        return {
          state: 'too_large',
          fingerprint,
          sealedStatus: sealResponse(keys.seal, scope, { status, headers: [], body: Buffer.alloc(0) }),
        };
      }
      return { state: 'done', fingerprint, sealed: sealResponse(keys.seal, scope, { status, headers, body: Buffer.concat(chunks) }) };
    };
    const write = res.write;
    const end = res.end;
    res.write = function (this: Response, chunk: unknown, ...rest: unknown[]) {
      capture(chunk, rest[0]);
      return (write as (...a: unknown[]) => boolean).apply(this, [chunk, ...rest]);
    } as Response['write'];
    res.end = function (this: Response, chunk?: unknown, ...rest: unknown[]) {
      res.write = write;
      res.end = end;
      capture(chunk, rest[0]);
      const status = res.statusCode;
      // Our own claim; none when answering an abandoned one (psp_outcome_unknown), which is replaced as it is.
      const own = found.state === 'claimed' ? found : undefined;
      const persist = isReplayable(status)
        ? opts.store.complete(scope, finalRecord(status), {
            ttlMs: opts.ttlMs,
            quota: { owner, window: usageWindow(Date.now(), opts.ttlMs) },
            replaces: own,
          })
        : own === undefined
          ? Promise.resolve()
          : opts.store.release(scope, own);
      void persist
        .catch((err: unknown) =>
          // The answer still goes out: the request ran (the PSP may have been paid). A retry then
          // meets the claim (409 in progress) until lockTtlMs, and then, for /v1/proxy, 502
          // psp_outcome_unknown: never a second run. So does a retry after a failover that lost an
          // answer kept on the primary alone (not acknowledged under IDEMPOTENCY_WRITE_ACK): the
          // claim it replaced was acknowledged, so the replica has at least that.
          opts.logger.error({ err, requestId: contextOf(res).requestId }, 'could not record the idempotent answer'),
        )
        .finally(() => (end as (...a: unknown[]) => Response).apply(this, [chunk, ...rest]));
      return this;
    } as Response['end'];
    if (abandoned) {
      // The first request may have reached the PSP before its gateway stopped: never send it again.
      opts.logger.warn({ requestId: contextOf(res).requestId }, 'an earlier request with this Idempotency-Key was interrupted');
      next(
        new TesseraError('psp_outcome_unknown', {
          message:
            'An earlier request with this Idempotency-Key was interrupted after it may have reached the PSP. Check with the PSP before paying again.',
        }),
      );
      return;
    }
    next();
  };
  // Most requests carry no key: they pass without the promise an async handler would cost.
  return (req: Request, res: Response, next: NextFunction): void | Promise<void> => {
    const header = req.headers['idempotency-key'];
    if (header === undefined) return next();
    return withKey(req, res, next, header);
  };
}

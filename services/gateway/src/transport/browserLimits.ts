import { TesseraError, type Logger } from '@tessera/common';
import { Counter, type Registry } from 'prom-client';
import {
  BROWSER_LIMIT_REASONS,
  browserIpBucket,
  browserKeyBucket,
  cardFingerprint,
  distinctCardsBucket,
  FAILED_SUBMISSIONS_PER_FORM_SESSION,
  formSessionFailuresBucket,
  type BrowserLimitReason,
} from '../domain/browserLimits';
import { isOverLimit, retryAfterSeconds } from '../domain/rateLimit';
import type { DistinctCardCounter } from '../store/distinctCardCounter';
import type { RateLimitCounter, WindowCount } from '../store/rateLimitCounter';
import type { RateLimitRefusal } from './rateLimit';

export interface BrowserLimitConfig {
  /** Browser tokenizations per publishable key per minute; 0 disables. */
  BROWSER_TOKENS_PER_KEY_PER_MINUTE: number;
  /** Browser tokenizations per shopper IP (IPv6: per /64) per minute; 0 disables. */
  BROWSER_TOKENS_PER_IP_PER_MINUTE: number;
  /** Distinct cards tokenized in a browser per shopper IP (IPv6: per /64) per hour; 0 disables. */
  BROWSER_DISTINCT_CARDS_PER_IP_PER_HOUR: number;
}

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/** tessera_browser_tokens_refused_total{reason}: the reason only, never a key, an IP or a card. */
export function browserRefusalCounter(registry: Registry): (reason: BrowserLimitReason) => void {
  const refused = new Counter({
    name: 'tessera_browser_tokens_refused_total',
    help: 'Browser tokenizations answered 429 by the card-testing limits, by limit (key, ip, distinct_cards, form_session_failures)',
    labelNames: ['reason'],
    registers: [registry],
  });
  // Every reason from the start, at 0, so an alert on the rate has a series before the first refusal.
  for (const reason of BROWSER_LIMIT_REASONS) refused.inc({ reason }, 0);
  return (reason) => refused.inc({ reason });
}

const MESSAGES: Record<BrowserLimitReason, string> = {
  key: 'Too many card tokenizations for this publishable key.',
  ip: 'Too many card tokenizations from this network.',
  distinct_cards: 'Too many different cards from this network.',
  form_session_failures: 'Too many refused cards on this payment page.',
};

/**
 * The card-testing limits of POST /v1/browser/tokens and of the hosted page's POST /pay/{id}. Like the API rate limits they fail open
 * when their store cannot answer (logged at most every 10 s): a limiter outage must not stop
 * checkouts. A refusal is a 429 with Retry-After, as every other limit.
 */
export class BrowserTokenLimiter {
  private lastStoreErrorLog = 0;

  constructor(
    private readonly deps: {
      counter: RateLimitCounter;
      cards: DistinctCardCounter;
      config: BrowserLimitConfig;
      /** From cardFingerprintKey(API_KEY_PEPPER). */
      fingerprintKey: Buffer;
      logger: Logger;
      onRefused?: (reason: BrowserLimitReason) => void;
    },
  ) {}

  private async ask<T>(op: () => Promise<T>, requestId: string): Promise<T | undefined> {
    try {
      return await op();
    } catch (err) {
      if (Date.now() - this.lastStoreErrorLog > 10_000) {
        this.lastStoreErrorLog = Date.now();
        this.deps.logger.error({ err, requestId }, 'browser limit store unavailable: card-testing limits are not enforced (failing open)');
      }
      return undefined;
    }
  }

  private refuse(reason: BrowserLimitReason, resetInMs: number): RateLimitRefusal {
    this.deps.onRefused?.(reason);
    const seconds = retryAfterSeconds(resetInMs);
    const message = `${MESSAGES[reason]} Try again in ${seconds} second${seconds === 1 ? '' : 's'}.`;
    return { error: new TesseraError('rate_limited', { message }), retryAfterSeconds: seconds };
  }

  private async window(bucket: string, limit: number, requestId: string): Promise<WindowCount | undefined> {
    if (limit <= 0) return undefined;
    const window = await this.ask(() => this.deps.counter.hit(bucket, MINUTE_MS), requestId);
    return window !== undefined && isOverLimit(window.count, limit) ? window : undefined;
  }

  /**
   * Counts one tokenization attempt of an authenticated publishable key from a shopper; the
   * refusal to answer when the shopper's network or the key is over its per-minute limit. Both
   * are counted every time, so a refused client keeps its window full.
   */
  async recordAttempt(keyId: string, clientIp: string | undefined, requestId: string): Promise<RateLimitRefusal | undefined> {
    const { config } = this.deps;
    const [byIp, byKey] = await Promise.all([
      this.window(browserIpBucket(clientIp), config.BROWSER_TOKENS_PER_IP_PER_MINUTE, requestId),
      this.window(browserKeyBucket(keyId), config.BROWSER_TOKENS_PER_KEY_PER_MINUTE, requestId),
    ]);
    if (byIp) return this.refuse('ip', byIp.resetInMs);
    if (byKey) return this.refuse('key', byKey.resetInMs);
    return undefined;
  }

  /**
   * Admits a valid card number into the shopper network's distinct cards of the hour; the
   * refusal to answer when it is a new card past the limit. The same card again always passes.
   */
  async admitCard(number: string, clientIp: string | undefined, requestId: string): Promise<RateLimitRefusal | undefined> {
    const limit = this.deps.config.BROWSER_DISTINCT_CARDS_PER_IP_PER_HOUR;
    if (limit <= 0) return undefined;
    const fingerprint = cardFingerprint(this.deps.fingerprintKey, number);
    const admission = await this.ask(() => this.deps.cards.admit(distinctCardsBucket(clientIp), fingerprint, limit, HOUR_MS), requestId);
    return admission === undefined || admission.admitted ? undefined : this.refuse('distinct_cards', admission.resetInMs);
  }

  /**
   * The hosted page: the refusal to answer when a form session has already had
   * FAILED_SUBMISSIONS_PER_FORM_SESSION cards refused, so it takes no more (until it expires).
   */
  async formSessionClosed(sessionId: string, requestId: string): Promise<RateLimitRefusal | undefined> {
    const window = await this.ask(() => this.deps.counter.peek(formSessionFailuresBucket(sessionId)), requestId);
    return this.closedBy(window);
  }

  /**
   * Counts a card the rules refused on a form session; the counter lives as long as the session
   * (`sessionEndsInMs`). The refusal that closes the session when this was its last allowed failure.
   */
  async recordRefusedCard(sessionId: string, sessionEndsInMs: number, requestId: string): Promise<RateLimitRefusal | undefined> {
    const bucket = formSessionFailuresBucket(sessionId);
    const window = await this.ask(() => this.deps.counter.hit(bucket, Math.max(1000, sessionEndsInMs)), requestId);
    return this.closedBy(window);
  }

  private closedBy(window: WindowCount | undefined): RateLimitRefusal | undefined {
    return window !== undefined && window.count >= FAILED_SUBMISSIONS_PER_FORM_SESSION
      ? this.refuse('form_session_failures', window.resetInMs)
      : undefined;
  }
}

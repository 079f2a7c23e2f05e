import type { Logger } from '@tessera/common';
import { Counter, type Registry } from 'prom-client';
import {
  browserAttackMarkBucket,
  browserRefusalsBucket,
  challengeBindingOf,
  challengeHmacKey,
  challengeMaxNumber,
  challengeParams,
  isUnderPressure,
  matchesBinding,
  signedMaxNumber,
  spentChallengeBucket,
} from '../domain/browserChallenge';
import {
  BROWSER_LIMIT_REASONS,
  browserIpBucket,
  browserKeyBucket,
  cardFingerprint,
  cardFingerprintKey,
  distinctCardsBucket,
  FAILED_SUBMISSIONS_PER_FORM_SESSION,
  formSessionFailuresBucket,
  recentKeyVolume,
  type BrowserLimitReason,
  volumeMinuteOf,
} from '../domain/browserLimits';
import { isOverLimit, limitRefusal, rateLimitRefusal, type RateLimitRefusal } from '../domain/rateLimit';
import type { DistinctCardCounter } from '../store/distinctCardCounter';
import type { RateLimitCounter, WindowCount } from '../store/rateLimitCounter';
import { altcha, type Challenge } from './altcha';
import { failOpen, type FailOpen } from './failOpen';

export interface BrowserLimitConfig {
  /** Browser tokenizations per key per minute past which each needs a proof of work; 0 disables. */
  BROWSER_TOKENS_PER_KEY_PER_MINUTE: number;
  /** A challenge's maxnumber at the threshold, for an address with no refusals. */
  BROWSER_CHALLENGE_BASE_NUMBER: number;
  /** The ceiling of a challenge's maxnumber. */
  BROWSER_CHALLENGE_MAX_NUMBER: number;
  /** How long a challenge may be solved and spent. */
  BROWSER_CHALLENGE_TTL_SECONDS: number;
  /** How long a key stays under attack (challenges on) once its volume reached the threshold. */
  BROWSER_ATTACK_COOLDOWN_SECONDS: number;
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
    help: 'Browser tokenizations answered 429 by the card-testing limits, by limit (ip, distinct_cards, form_session_failures, challenge_required, challenge_invalid)',
    labelNames: ['reason'],
    registers: [registry],
  });
  // Every reason from the start, at 0, so an alert on the rate has a series before the first refusal.
  for (const reason of BROWSER_LIMIT_REASONS) refused.inc({ reason }, 0);
  return (reason) => refused.inc({ reason });
}

/**
 * tessera_browser_attack_requests_total{key_id}: tokenization attempts on a key under card-testing
 * pressure (a proof of work demanded). Its rate above 0 means the key is under attack. The key id
 * is the one label: never the key, an address or a card.
 */
export function browserAttackCounter(registry: Registry): (keyId: string) => void {
  const attacked = new Counter({
    name: 'tessera_browser_attack_requests_total',
    help: 'Browser tokenization attempts on a key under card-testing pressure (proof of work demanded), by key id; a rate above 0 means the key is under attack',
    labelNames: ['key_id'],
    registers: [registry],
  });
  return (keyId) => attacked.inc({ key_id: keyId });
}

const MESSAGES: Record<Exclude<BrowserLimitReason, 'challenge_required' | 'challenge_invalid'>, string> = {
  ip: 'Too many card tokenizations from this network.',
  distinct_cards: 'Too many different cards from this network.',
  form_session_failures: 'Too many refused cards on this payment page.',
};

const CHALLENGE_MESSAGES = {
  challenge_required: 'This card needs a proof of work from the browser: get a challenge, solve it and send the solution with the card.',
  challenge_invalid:
    'The proof of work is not valid for this card: it is wrong, expired, already used or made for another key or network. Get a new challenge.',
  challenge_outgrown:
    'The proof of work was made for less card-testing pressure than this key is under now: get a new challenge, solve it and send the solution with the card.',
};

/** What spending a solution came to: spent (the attempt may go on), or why not. */
type Spending = 'spent' | 'invalid' | 'outgrown';

type SolutionPayload = Parameters<typeof altcha.verifySolution>[0] & object;

/** An ALTCHA payload's shape (what verifySolution reads), before any of it is trusted. */
function isSolutionShaped(value: unknown): value is SolutionPayload {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.algorithm === 'string' &&
    typeof v.challenge === 'string' &&
    typeof v.salt === 'string' &&
    typeof v.signature === 'string' &&
    Number.isSafeInteger(v.number)
  );
}

/** The outcome of a tokenization attempt: a refusal, or admitted (and whether its key is under attack). */
export type BrowserAdmission = { refusal: RateLimitRefusal; underAttack?: undefined } | { refusal?: undefined; underAttack: boolean };

/** A key's card-testing state as the dashboard shows it. */
export interface AttackState {
  underAttack: boolean;
  /** How long the attack mark still lasts (0 when not under attack). */
  endsInMs: number;
}

/**
 * The read side of the card-testing limiter: whether a key is under attack, from the very counters
 * the limiter marks (BrowserTokenLimiter.attackState). The admin service, which never tokenizes,
 * reads it with nothing but the counters' store: no pepper, no challenge key, no limits.
 */
export async function readAttackState(counter: Pick<RateLimitCounter, 'peek'>, keyId: string): Promise<AttackState> {
  const mark = await counter.peek(browserAttackMarkBucket(keyId));
  return { underAttack: mark.count > 0, endsInMs: mark.resetInMs };
}

/**
 * The card-testing limits of POST /v1/browser/tokens and of the hosted page's POST /pay/{id}. Like the API rate limits they fail open
 * when their store cannot answer (failOpen): a limiter outage must not stop checkouts. A refusal
 * is a 429 with Retry-After, as every other limit.
 */
export class BrowserTokenLimiter {
  private readonly ask: FailOpen;

  constructor(
    private readonly deps: {
      counter: RateLimitCounter;
      cards: DistinctCardCounter;
      config: BrowserLimitConfig;
      /** From cardFingerprintKey(API_KEY_PEPPER). */
      fingerprintKey: Buffer;
      /** The challenges' HMAC key (challengeHmacKey). */
      challengeKey: string;
      logger: Logger;
      onRefused?: (reason: BrowserLimitReason) => void;
      /** Each attempt on a key under attack (browserAttackCounter). */
      onAttackRequest?: (keyId: string) => void;
      /**
       * The admission that marked a key under attack: once per cool-down on a replica, not per
       * attempt (card_testing.suspected). Not awaited: a checkout never waits for it.
       */
      onAttackMarked?: (keyId: string, attempts: number) => void;
      now?: () => number;
    },
  ) {
    // No deadline of its own (unlike the API's failed-auth read): under a card-testing attack the
    // gateway is busy, and a counter late by the event loop's lag must still count, not fail open.
    // A store that is down still fails open, at the Redis command timeout.
    this.ask = failOpen(deps.logger, 'browser limit store unavailable: card-testing limits are not enforced (failing open)');
  }

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  /**
   * A limit's refusal. A new one (`against` the address that caused it) also counts against the
   * address, whose challenges it makes harder for the hour; a page reload told again is not new.
   */
  private async refuse(
    reason: keyof typeof MESSAGES,
    resetInMs: number,
    against?: { clientIp: string | undefined; requestId: string },
  ): Promise<RateLimitRefusal> {
    this.deps.onRefused?.(reason);
    if (against) await this.countRefusal(against.clientIp, against.requestId);
    return rateLimitRefusal(MESSAGES[reason], resetInMs);
  }

  private async countRefusal(clientIp: string | undefined, requestId: string): Promise<void> {
    await this.ask(() => this.deps.counter.hit(browserRefusalsBucket(clientIp), HOUR_MS), requestId);
  }

  /**
   * Asks for the work: Retry-After 1, since a browser that solves the challenge may send the card
   * again at once. A missing solution is how every shopper's first try under pressure looks, and an
   * outgrown one how a shopper's looks when the attack grew while it solved; only an invalid one is
   * misbehaviour, counted against the address.
   */
  private async demandWork(
    why: keyof typeof CHALLENGE_MESSAGES,
    clientIp: string | undefined,
    requestId: string,
  ): Promise<RateLimitRefusal> {
    this.deps.onRefused?.(why === 'challenge_invalid' ? 'challenge_invalid' : 'challenge_required');
    if (why === 'challenge_invalid') await this.countRefusal(clientIp, requestId);
    return limitRefusal('challenge_required', CHALLENGE_MESSAGES[why], 1);
  }

  /**
   * The key's volume this clock minute, its recent volume (recentKeyVolume: what a challenge's
   * difficulty follows), whether its attack mark is set, and whether it is under pressure.
   */
  private async pressureOf(keyId: string, requestId: string) {
    const now = this.now();
    const minute = volumeMinuteOf(now);
    const [current, previous, mark] = await Promise.all([
      this.ask(() => this.deps.counter.peek(browserKeyBucket(keyId, minute)), requestId),
      this.ask(() => this.deps.counter.peek(browserKeyBucket(keyId, minute - 1)), requestId),
      this.ask(() => this.deps.counter.peek(browserAttackMarkBucket(keyId)), requestId),
    ]);
    const keyVolume = current?.count ?? 0;
    const recentVolume = recentKeyVolume(keyVolume, previous?.count ?? 0, now - minute * MINUTE_MS);
    const marked = (mark?.count ?? 0) > 0;
    return {
      keyVolume,
      recentVolume,
      marked,
      underAttack: isUnderPressure(keyVolume, marked, this.deps.config.BROWSER_TOKENS_PER_KEY_PER_MINUTE),
    };
  }

  /** The maxnumber a challenge must have now: as hard as the key's recent volume and the address's refusals make it. */
  private async requiredMaxNumber(recentVolume: number, clientIp: string | undefined, requestId: string): Promise<number> {
    const refusals = await this.ask(() => this.deps.counter.peek(browserRefusalsBucket(clientIp)), requestId);
    return challengeMaxNumber(recentVolume, refusals?.count ?? 0, this.difficulty());
  }

  private difficulty() {
    const { config } = this.deps;
    return {
      threshold: config.BROWSER_TOKENS_PER_KEY_PER_MINUTE,
      base: config.BROWSER_CHALLENGE_BASE_NUMBER,
      max: config.BROWSER_CHALLENGE_MAX_NUMBER,
    };
  }

  /**
   * A challenge for a tokenization with this key from this address (GET /v1/browser/challenge,
   * GET /pay/{id}/challenge): bound to both, as hard as the key's recent volume and the address's
   * refusals make it now, and signed with that difficulty. Issuing stores nothing (the challenge is
   * signed), so asking costs an attacker nothing but gains it nothing either: only spending a
   * solution counts, and only while the pressure has not outgrown the difficulty it was made for.
   */
  async issueChallenge(keyId: string, clientIp: string | undefined, requestId: string): Promise<Challenge & { required: boolean }> {
    const { recentVolume, underAttack } = await this.pressureOf(keyId, requestId);
    const maxnumber = await this.requiredMaxNumber(recentVolume, clientIp, requestId);
    const challenge = await altcha.createChallenge({
      hmacKey: this.deps.challengeKey,
      maxnumber,
      expires: new Date(this.now() + this.deps.config.BROWSER_CHALLENGE_TTL_SECONDS * 1000),
      params: challengeParams(challengeBindingOf(keyId, clientIp, this.deps.challengeKey), maxnumber),
    });
    return { ...challenge, required: underAttack };
  }

  /**
   * Spends `solution` (a base64 ALTCHA payload): it must solve an unexpired challenge issued for
   * this key and address, not spent before ('invalid' otherwise), and one at least as hard as the
   * key's recent volume and the address's refusals require now ('outgrown' otherwise, left
   * unspent): else challenges fetched in bulk just after the key's minute began, at the base
   * difficulty, could be spent through their whole life however hard the attack pushed meanwhile.
   */
  private async spendSolution(
    solution: string,
    keyId: string,
    clientIp: string | undefined,
    recentVolume: number,
    requestId: string,
  ): Promise<Spending> {
    if (solution.length > 2048) return 'invalid';
    let payload: unknown;
    try {
      payload = JSON.parse(Buffer.from(solution, 'base64').toString('utf8'));
    } catch {
      return 'invalid';
    }
    if (!isSolutionShaped(payload)) return 'invalid';
    const params = altcha.extractParams(payload);
    const expiresAt = Number(params.expires) * 1000;
    const valid =
      matchesBinding(params, challengeBindingOf(keyId, clientIp, this.deps.challengeKey)) &&
      expiresAt > this.now() &&
      (await altcha.verifySolution(payload, this.deps.challengeKey, false).catch(() => false));
    if (!valid) return 'invalid';
    if (signedMaxNumber(params) < (await this.requiredMaxNumber(recentVolume, clientIp, requestId))) return 'outgrown';
    // Single use, for every replica: the first spend starts a window as long as the challenge's life.
    const spent = await this.ask(
      () => this.deps.counter.hit(spentChallengeBucket(payload.signature), Math.max(1000, expiresAt - this.now())),
      requestId,
    );
    return spent === undefined || spent.count === 1 ? 'spent' : 'invalid';
  }

  /**
   * One tokenization attempt of an authenticated key (a publishable key, or the secret key of a
   * hosted page's session) from a shopper, with the challenge solution it carries, if any.
   * Refused when the shopper's network is over its per-minute limit (counted every time, so a
   * refused client keeps its window full), or when the key is under pressure and the attempt
   * carries no valid, unspent solution. Otherwise admitted and counted in the key's volume; an
   * admission that takes the key to its threshold marks it under attack for the cool-down.
   */
  async recordAttempt(
    keyId: string,
    clientIp: string | undefined,
    solution: string | undefined,
    requestId: string,
  ): Promise<BrowserAdmission> {
    const { config } = this.deps;
    const threshold = config.BROWSER_TOKENS_PER_KEY_PER_MINUTE;
    const perIp = config.BROWSER_TOKENS_PER_IP_PER_MINUTE;
    // Both asked at once: one round trip to Redis on the way in.
    const [byIp, pressure] = await Promise.all([
      perIp > 0 ? this.ask(() => this.deps.counter.hit(browserIpBucket(clientIp), MINUTE_MS), requestId) : undefined,
      threshold > 0 ? this.pressureOf(keyId, requestId) : undefined,
    ]);
    if (byIp !== undefined && isOverLimit(byIp.count, perIp)) {
      return { refusal: await this.refuse('ip', byIp.resetInMs, { clientIp, requestId }) };
    }
    if (pressure === undefined) return { underAttack: false };
    const { underAttack } = pressure;
    if (underAttack) {
      this.deps.onAttackRequest?.(keyId);
      if (solution === undefined) return { refusal: await this.demandWork('challenge_required', clientIp, requestId) };
      const spending = await this.spendSolution(solution, keyId, clientIp, pressure.recentVolume, requestId);
      if (spending === 'invalid') return { refusal: await this.demandWork('challenge_invalid', clientIp, requestId) };
      if (spending === 'outgrown') return { refusal: await this.demandWork('challenge_outgrown', clientIp, requestId) };
    }
    // Two minutes: the next minute's challenges read this one's volume (pressureOf).
    const volume = await this.ask(
      () => this.deps.counter.hit(browserKeyBucket(keyId, volumeMinuteOf(this.now())), 2 * MINUTE_MS),
      requestId,
    );
    if (!pressure.marked && volume !== undefined && volume.count >= threshold) {
      // Fixed from the first mark (a hit does not extend it): the volume window sets it again while the attack goes on.
      const mark = await this.ask(
        () => this.deps.counter.hit(browserAttackMarkBucket(keyId), config.BROWSER_ATTACK_COOLDOWN_SECONDS * 1000),
        requestId,
      );
      // The first hit of the cool-down set the mark: of concurrent admissions, one tells.
      if (mark?.count === 1) this.deps.onAttackMarked?.(keyId, volume.count);
    }
    return { underAttack };
  }

  /** Whether the key is under attack now (its attack mark is set), and for how much longer: for the dashboard. */
  attackState(keyId: string): Promise<AttackState> {
    return readAttackState(this.deps.counter, keyId);
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
    return admission === undefined || admission.admitted
      ? undefined
      : this.refuse('distinct_cards', admission.resetInMs, { clientIp, requestId });
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
  async recordRefusedCard(
    sessionId: string,
    sessionEndsInMs: number,
    clientIp: string | undefined,
    requestId: string,
  ): Promise<RateLimitRefusal | undefined> {
    const bucket = formSessionFailuresBucket(sessionId);
    const window = await this.ask(() => this.deps.counter.hit(bucket, Math.max(1000, sessionEndsInMs)), requestId);
    return this.closedBy(window, { clientIp, requestId });
  }

  private async closedBy(
    window: WindowCount | undefined,
    against?: { clientIp: string | undefined; requestId: string },
  ): Promise<RateLimitRefusal | undefined> {
    return window !== undefined && window.count >= FAILED_SUBMISSIONS_PER_FORM_SESSION
      ? this.refuse('form_session_failures', window.resetInMs, against)
      : undefined;
  }
}

/**
 * The card-testing limiter the fields service runs: its windows beside the API's rate limits, its
 * fingerprints and challenges keyed from the pepper (unless BROWSER_CHALLENGE_HMAC_KEY is set),
 * its refusals and attack requests counted in `metrics`.
 */
export function cardTestingLimiter(params: {
  config: BrowserLimitConfig & { BROWSER_CHALLENGE_HMAC_KEY?: string | undefined };
  stores: { rateLimits: RateLimitCounter; distinctCards: DistinctCardCounter };
  pepper: string;
  logger: Logger;
  metrics: Registry;
  /** Told when a key is first marked under attack (the fields service records card_testing.suspected). */
  onAttackMarked?: (keyId: string, attempts: number) => void;
}): BrowserTokenLimiter {
  const { config, stores, pepper, metrics } = params;
  return new BrowserTokenLimiter({
    counter: stores.rateLimits,
    cards: stores.distinctCards,
    config,
    fingerprintKey: cardFingerprintKey(pepper),
    challengeKey: challengeHmacKey(config.BROWSER_CHALLENGE_HMAC_KEY, pepper),
    logger: params.logger,
    onRefused: browserRefusalCounter(metrics),
    onAttackRequest: browserAttackCounter(metrics),
    ...(params.onAttackMarked ? { onAttackMarked: params.onAttackMarked } : {}),
  });
}

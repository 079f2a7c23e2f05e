import { Cluster, Command, type Redis } from 'ioredis';
import { describeWriteAck, TesseraError, withDeadline, type Logger, type WriteAck } from '@tessera/common';
import {
  AcknowledgedWriter,
  defineScripts,
  primariesOf,
  redisUnavailable,
  unacknowledged,
  waitCommand,
  type PipelineCommand,
  type RedisClient,
} from '@tessera/common/redis';
import type { CardEntryToSave, CardStore, FingerprintClaim, SaveOutcome, StoreHealth, TakenCvv } from './cardStore';
import {
  CARD_KEY_PREFIX,
  cardKey,
  checkpointKey,
  cvvKey,
  FINGERPRINT_KEY_KEY,
  merchantKekKey,
  MERCHANT_KEK_KEY_PREFIX,
  ownerOfMerchantKekKey,
  shreddedKeksKey,
  aliasIndexKey,
  fingerprintIndexKey,
  tokenAliasesKey,
  parseCard,
  parseCvv,
  type RawRecord,
  recordKey,
  serializeCard,
  serializeCvv,
  tokenOfCardKey,
  usedCvvKey,
} from './records';
import type { RecordKind } from '../domain/envelope';
import type { StoredCard, StoredCvv } from '../domain/card';
import { connectRedis, type RedisTarget } from './cardStoreConnection';

export type { RedisClient } from '@tessera/common/redis';
export { connectRedis, type RedisTarget } from './cardStoreConnection';

export interface RedisCardStoreOptions {
  commandTimeoutMs: number;
  logger: Logger;
  /** VAULT_WRITE_ACK; `none` when absent. */
  writeAck?: WriteAck;
}

/** Compare-and-set that keeps the key's TTL (KEEPTTL needs Redis >= 6). */
const REPLACE_IF_UNCHANGED = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
  return 1
end
return 0`;

/**
 * Retain: the card is replaced (with its new TTL) only if unchanged, and the CVV, if still there,
 * gets its own TTL, in one step. Both keys share the {token} hash tag, so this is single-slot.
 */
const RETAIN_IF_UNCHANGED = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
if tonumber(ARGV[4]) > 0 then
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
end
return 1`;

/**
 * Takes the CVV only if it is still the record that was identified (0 otherwise: read it again),
 * and records its replay id in the token's used set, extending that set's TTL to `rememberMs` if
 * shorter. 2: the id was used before (a restored copy): the record is deleted, not handed out.
 */
const TAKE_CVV_IF_UNCHANGED = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
if redis.call('SADD', KEYS[2], ARGV[2]) == 0 then
  return 2
end
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[3]) then
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
return 1`;
/**
 * The fingerprint index's claim: the entry is set when empty, when it still names the token found
 * gone (ARGV[2]), or when it already names this token (a TTL refresh); the token it names
 * afterwards is answered.
 */
const CLAIM_FINGERPRINT = `
local current = redis.call('GET', KEYS[1])
if current == false or current == ARGV[1] or current == ARGV[2] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
  return ARGV[1]
end
return current`;

const RELEASE_FINGERPRINT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
end
return 1`;

/**
 * A token's alias of a format, unless it has one already: the list keeps the longer of its TTL and
 * `ttlMs`; the alias kept for the format is answered.
 */
const ADD_TOKEN_ALIAS = `
redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return redis.call('HGET', KEYS[1], ARGV[1])`;

/** An index entry's new TTL, only while it still names the token. */
const EXTEND_IF_NAMES = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1`;

/** The first vault to store a fingerprint key wins; every replica then uses the stored one. */
const CREATE_IF_ABSENT = `
redis.call('SET', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[1])`;

/**
 * Crypto-shredding: the live KEK is deleted and its id remembered as destroyed, in one step (both
 * keys in the merchant's slot). '-' stands for "no live KEK at the time". Answers the id destroyed.
 */
const SHRED_KEK = `
local stored = redis.call('GET', KEYS[1])
local id = '-'
if stored then
  local ok, value = pcall(cjson.decode, stored)
  if ok and type(value) == 'table' and type(value['kekId']) == 'string' then id = value['kekId'] end
end
redis.call('HSET', KEYS[2], id, ARGV[1])
redis.call('DEL', KEYS[1])
return id`;

/** A CVV rewrapped or replaced between its read and its take is read again this often. */
const TAKE_CVV_ATTEMPTS = 5;

/** The scripts above as commands of the client: sent with EVALSHA (see defineScripts). */
interface CardScripts {
  tesseraReplaceIfUnchanged(key: string, expected: string | Buffer, next: string | Buffer): Promise<number>;
  tesseraTakeCvvIfUnchanged(cvvKey: string, usedKey: string, expected: RawRecord, id: string, rememberMs: number): Promise<number>;
  /** Sent by name inside claimFingerprint's pipeline, followed there by WAIT. */
  tesseraClaimFingerprint(indexKey: string, token: string, replacing: string, ttlMs: number): Promise<string>;
  /** Deletes an index entry (fingerprint or alias) only while it names `token`. */
  tesseraReleaseFingerprint(indexKey: string, token: string): Promise<number>;
  tesseraAddTokenAlias(aliasesKey: string, format: string, alias: string, ttlMs: number): Promise<string | null>;
  tesseraExtendIfNames(indexKey: string, token: string, ttlMs: number): Promise<number>;
  /** Sent by name inside createFingerprintKey's pipeline, followed there by WAIT. */
  tesseraCreateIfAbsent(key: string, value: string): Promise<string>;
  /** Sent by name inside shredMerchantKek's pipeline, followed there by WAIT. */
  tesseraShredKek(kekKey: string, shreddedKey: string, at: string): Promise<string>;
  /** Sent by name inside retainCard's pipeline, followed there by WAIT. */
  tesseraRetainIfUnchanged(
    cardKey: string,
    cvvKey: string,
    expected: RawRecord,
    next: RawRecord,
    cardTtlMs: number,
    cvvTtlMs: number,
  ): Promise<number>;
}

export class RedisCardStore implements CardStore {
  private lastLoggedError: string | undefined;
  private readonly writeAck: WriteAck;
  private readonly writer: AcknowledgedWriter;
  private readonly scripts: CardScripts;

  /** The URL may hold a password: it is given to ioredis only, never logged. */
  static connect(target: string | RedisTarget, opts: RedisCardStoreOptions): RedisCardStore {
    const resolved = typeof target === 'string' ? { url: target } : target;
    return new RedisCardStore(connectRedis(resolved, opts.commandTimeoutMs), opts.logger, opts.writeAck, opts.commandTimeoutMs);
  }

  /** `operationTimeoutMs` bounds each store operation as a whole, queueing included (REDIS_COMMAND_TIMEOUT_MS). */
  constructor(
    private readonly redis: RedisClient,
    private readonly logger: Logger,
    writeAck: WriteAck = { kind: 'none' },
    private readonly operationTimeoutMs = 2000,
  ) {
    this.writeAck = writeAck;
    this.writer = new AcknowledgedWriter(redis, writeAck, logger, 'VAULT_WRITE_ACK');
    this.scripts = defineScripts<CardScripts>(redis, {
      tesseraReplaceIfUnchanged: { numberOfKeys: 1, lua: REPLACE_IF_UNCHANGED },
      tesseraTakeCvvIfUnchanged: { numberOfKeys: 2, lua: TAKE_CVV_IF_UNCHANGED },
      tesseraRetainIfUnchanged: { numberOfKeys: 2, lua: RETAIN_IF_UNCHANGED },
      tesseraClaimFingerprint: { numberOfKeys: 1, lua: CLAIM_FINGERPRINT },
      tesseraReleaseFingerprint: { numberOfKeys: 1, lua: RELEASE_FINGERPRINT },
      tesseraCreateIfAbsent: { numberOfKeys: 1, lua: CREATE_IF_ABSENT },
      tesseraAddTokenAlias: { numberOfKeys: 1, lua: ADD_TOKEN_ALIAS },
      tesseraExtendIfNames: { numberOfKeys: 1, lua: EXTEND_IF_NAMES },
      tesseraShredKek: { numberOfKeys: 2, lua: SHRED_KEK },
    });
    // Without an 'error' listener ioredis would print to stderr; a down Redis must never crash the vault.
    redis.on('error', (err: Error) => {
      if (err.message === this.lastLoggedError) return;
      this.lastLoggedError = err.message;
      this.logger.error({ err, redisStatus: redis.status }, 'redis connection error');
    });
    redis.on('ready', () => {
      this.lastLoggedError = undefined;
      this.logger.info('redis connected');
    });
    redis.on('end', () => this.logger.info('redis connection closed'));
  }

  /** Resolves true once Redis is ready, false after timeoutMs; the vault starts either way. */
  waitUntilReady(timeoutMs: number): Promise<boolean> {
    if (this.redis.status === 'ready') return Promise.resolve(true);
    return new Promise((resolve) => {
      const onReady = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.redis.off('ready', onReady);
        resolve(false);
      }, timeoutMs);
      this.redis.once('ready', onReady);
    });
  }

  /**
   * Card and CVV in one MULTI, then (replica:N) WAIT on the same connection. Resolves only once
   * the write is acknowledged at the VAULT_WRITE_ACK level; otherwise the record is removed again
   * (best effort: nobody learns the token) and the call fails with service_unavailable.
   */
  async save(entry: CardEntryToSave): Promise<void> {
    const [outcome] = await this.saveMany([entry]);
    if (outcome !== undefined && !outcome.saved) throw outcome.error;
  }

  /**
   * A group commit: one pipeline with a MULTI per entry and one WAIT for all of them, so a batch
   * costs one write, one read and one acknowledgement. In a Cluster the entries are grouped by the
   * master owning their slot and each group is such a pipeline on that master's own connection:
   * WAIT only counts the writes of the connection it is sent on, so it must follow them there.
   * The whole call is bounded by the operation timeout; an entry not settled by then fails.
   */
  async saveMany(entries: readonly CardEntryToSave[]): Promise<SaveOutcome[]> {
    const outcomes: Array<SaveOutcome | undefined> = entries.map(() => undefined);
    // The first outcome of an entry counts: one that settles after the deadline changes nothing.
    const settle = (index: number, outcome: SaveOutcome): void => {
      outcomes[index] ??= outcome;
    };
    if (entries.length === 0) return [];
    try {
      await this.withinDeadline(async () => {
        await this.writer.ensureDurable();
        if (this.redis instanceof Cluster) {
          await this.saveOnCluster(this.redis, entries, settle);
          return;
        }
        const results = await this.writeGroup(this.redis, entries, true);
        results.forEach((result, i) =>
          settle(
            i,
            result.kind === 'saved'
              ? SAVED
              : failedWith(result.kind === 'failed' ? result.error : new Error(`a cluster reply (${result.kind}) from a single Redis`)),
          ),
        );
      });
    } catch (err) {
      // The deadline, or a refusal before anything was written (aof settings): every entry not
      // settled yet fails with it.
      entries.forEach((_, i) => settle(i, failedWith(err)));
    }
    return outcomes.map((outcome) => outcome ?? failedWith(new Error('card write not settled')));
  }

  /**
   * Cluster writes go to the node the slot map names, on that node's connection (so WAIT counts
   * them). A MOVED answer (a slot moved, a replica was promoted) is followed to the node it names
   * and makes the slot map refresh in the background so later writes go straight there; ASK,
   * CLUSTERDOWN and TRYAGAIN (a slot migrating, a node between two cluster states) are retried
   * after RETRY_DELAY_MS, as ioredis does for single commands. At most MAX_ATTEMPTS rounds, within
   * the operation's deadline; a node that cannot be reached fails its entries only.
   */
  private async saveOnCluster(
    cluster: Cluster,
    entries: readonly CardEntryToSave[],
    settle: (index: number, outcome: SaveOutcome) => void,
  ): Promise<void> {
    // The index entries live in their fingerprints' slots, usually on other masters: sent at once
    // through the cluster client, alongside the card writes rather than after them.
    const indexed = Promise.all(
      entries.flatMap((entry) => {
        const command = indexCommand(entry);
        return command === undefined ? [] : [cluster.call(...command).catch(() => undefined)];
      }),
    );
    type Pending = { entry: CardEntryToSave; index: number; target: string | undefined };
    let pending: Pending[] = entries.map((entry, index) => ({ entry, index, target: undefined }));
    for (let round = 0; pending.length > 0; round++) {
      const groups = new Map<string, Pending[]>();
      for (const item of pending) {
        const node = item.target ?? cluster.slots[slotOf(cardKey(item.entry.token))]?.[0] ?? 'unknown';
        groups.set(node, [...(groups.get(node) ?? []), { ...item, target: node }]);
      }
      const redirected: Pending[] = [];
      let refresh = false;
      let pause = false;
      await Promise.all(
        [...groups.values()].map(async (group) => {
          const first = group[0] as Pending;
          const node = cluster.nodes('all').find((n) => nodeName(n) === first.target);
          if (node === undefined) {
            // The slot map names a node the client dropped (it went away): refresh and try again once.
            refresh = true;
            if (round === 0) redirected.push(...group.map((item) => ({ ...item, target: undefined })));
            else for (const item of group) settle(item.index, failedWith(new Error(`no connection to the master ${first.target ?? ''}`)));
            return;
          }
          const results = await this.writeGroup(
            node,
            group.map((item) => item.entry),
          );
          results.forEach((result, i) => {
            const item = group[i] as Pending;
            if (result.kind === 'saved') settle(item.index, SAVED);
            else if (result.kind === 'failed') {
              // A master that went away: its replica may be promoted by the next refresh.
              refresh = true;
              settle(item.index, failedWith(result.error));
            } else if (result.kind === 'retry') {
              pause = true;
              refresh = true;
              redirected.push({ ...item, target: undefined });
            } else {
              refresh = true;
              redirected.push({ ...item, target: result.to });
            }
          });
        }),
      );
      if (redirected.length > 0 && round + 1 >= MAX_ATTEMPTS) {
        for (const item of redirected) settle(item.index, failedWith(new Error('too many cluster redirections or retries')));
        break;
      }
      if (pause) await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY_MS));
      if (refresh) {
        // A write that names no node waits for the new map; the others follow their redirection at once.
        const refreshed = refreshSlots(cluster);
        if (redirected.some((item) => item.target === undefined)) await refreshed;
      }
      pending = redirected;
    }
    await indexed;
  }

  /**
   * One pipeline on one connection: MULTI/SET/SET/EXEC per entry, then one WAIT for all of them.
   * Each entry's result is its own: a queue-time redirection (this node does not serve its slot)
   * or an error inside its transaction concerns only that entry. `withIndex` (a single Redis): each
   * card's fingerprint index entry (SET NX) is in its own transaction, so neither is ever there
   * without the other, even when the vault dies in the middle of a batch's pipeline (an import
   * resumed after kill -9 finds every card it wrote); its reply (nil when the entry was held)
   * does not decide the outcome, and WAIT covers it.
   */
  private async writeGroup(node: Redis, entries: readonly CardEntryToSave[], withIndex = false): Promise<WriteResult[]> {
    const commands: Array<Array<string | number | Buffer>> = [];
    const spans: Array<{ first: number; exec: number }> = [];
    for (const entry of entries) {
      const first = commands.length;
      commands.push(['multi'], ['set', cardKey(entry.token), serializeCard(entry.card), 'PX', Math.ceil(entry.cardTtlMs)]);
      if (entry.cvv !== undefined) {
        commands.push(['set', cvvKey(entry.token), serializeCvv(entry.cvv.record), 'PX', Math.ceil(entry.cvv.ttlMs)]);
      } else {
        commands.push(['del', cvvKey(entry.token)]);
      }
      const aliases = Object.entries(entry.aliases ?? {});
      if (aliases.length > 0) {
        commands.push(
          ['hset', tokenAliasesKey(entry.token), ...aliases.flat()],
          ['pexpire', tokenAliasesKey(entry.token), Math.ceil(entry.cardTtlMs)],
        );
      }
      const index = withIndex ? indexCommand(entry) : undefined;
      if (index !== undefined) commands.push(index);
      spans.push({ first, exec: commands.length });
      commands.push(['exec']);
    }
    const wait = waitCommand(this.writeAck);
    if (wait !== undefined) commands.push(wait);
    let replies: Array<[Error | null, unknown]> | null;
    try {
      replies = await node.pipeline(commands).exec();
    } catch (err) {
      return entries.map(() => ({ kind: 'failed', error: err }));
    }
    if (replies === null) return entries.map(() => ({ kind: 'failed', error: new Error('redis pipeline was aborted') }));
    const results = spans.map(({ first, exec }): WriteResult => {
      for (let i = first; i < exec; i++) {
        const err = replies?.[i]?.[0];
        if (!err) continue;
        const [kind, , to] = err.message.split(' ');
        if (kind === 'MOVED' && to !== undefined) return { kind: 'moved', to };
        // ASK: the slot is migrating, and the importing node refuses a transaction over keys it
        // does not have yet (TRYAGAIN), which a new token's card and CVV always are; so is the
        // source while it has some of them. Both end when the slot has moved: try again shortly.
        if (kind === 'ASK' || kind === 'CLUSTERDOWN' || kind === 'TRYAGAIN') return { kind: 'retry' };
        return { kind: 'failed', error: err };
      }
      const [execErr, execReply] = replies?.[exec] ?? [new Error('no reply to EXEC')];
      if (execErr) return { kind: 'failed', error: execErr };
      if (!Array.isArray(execReply)) return { kind: 'failed', error: new Error('redis transaction was aborted') };
      const inner = execReply.find((reply): reply is Error => reply instanceof Error);
      return inner === undefined ? { kind: 'saved' } : { kind: 'failed', error: inner };
    });
    if (wait === undefined) return results;
    const shortfall = unacknowledged(this.writeAck, replies[commands.length - 1]);
    const written = entries.filter((_, i) => results[i]?.kind === 'saved');
    if (written.length === 0 || shortfall === undefined) return results;
    this.logger.error(
      {
        wanted: shortfall.wanted,
        acked: shortfall.acked,
        waitError: shortfall.cause instanceof Error ? shortfall.cause.message : undefined,
        writeAck: describeWriteAck(this.writeAck),
        cards: written.length,
        node: nodeName(node),
      },
      'card write not acknowledged by enough replicas: refusing the token',
    );
    // One DEL per token: in a Cluster, keys of different slots cannot share a command.
    const cleanup = node.pipeline();
    for (const entry of written) cleanup.del(cardKey(entry.token), cvvKey(entry.token), tokenAliasesKey(entry.token));
    await cleanup.exec().catch(() => undefined);
    return results.map((result) => (result.kind === 'saved' ? { kind: 'failed', error: shortfall } : result));
  }

  async getCard(token: string): Promise<StoredCard | null> {
    const raw = await this.run(() => this.redis.getBuffer(cardKey(token)));
    return raw === null ? null : parseCard(raw);
  }

  async getCvv(token: string): Promise<StoredCvv | null> {
    const raw = await this.run(() => this.redis.getBuffer(cvvKey(token)));
    return raw === null ? null : parseCvv(raw);
  }

  /**
   * Read, identify, then take-if-unchanged in one script that also records the id as used: a
   * crash between taking and recording can therefore never leave a consumed CVV without its mark.
   * Two concurrent takers: the script runs for one of them; the other finds the record gone.
   */
  async takeCvv(token: string, identify: (record: StoredCvv) => { id: string; rememberMs: number }): Promise<TakenCvv | null> {
    for (let attempt = 0; attempt < TAKE_CVV_ATTEMPTS; attempt++) {
      const raw = await this.run(() => this.redis.getBuffer(cvvKey(token)));
      if (raw === null) return null;
      const record = parseCvv(raw);
      const { id, rememberMs } = identify(record);
      const outcome = await this.run(() =>
        this.scripts.tesseraTakeCvvIfUnchanged(cvvKey(token), usedCvvKey(token), raw, id, Math.max(1, Math.ceil(rememberMs))),
      );
      if (outcome === 1) return { outcome: 'taken', record };
      if (outcome === 2) return { outcome: 'replayed' };
    }
    throw new TesseraError('service_unavailable', { message: 'The CVV kept changing while it was being taken.' });
  }

  async hasCvv(token: string): Promise<boolean> {
    return (await this.run(() => this.redis.exists(cvvKey(token)))) > 0;
  }

  /**
   * The script, then (replica:N) WAIT in the same pipeline, as for save: a retained token must not
   * fall back to a provisional one with a failover. When the acknowledgement falls short the call
   * fails (the caller may retry: retaining is idempotent).
   */
  async retainCard(token: string, expected: RawRecord, next: StoredCard, ttl: { cardTtlMs: number; cvvTtlMs: number }): Promise<boolean> {
    const [replaced] = await this.writeAcknowledged([
      [
        'tesseraRetainIfUnchanged',
        cardKey(token),
        cvvKey(token),
        expected,
        serializeCard(next),
        Math.ceil(ttl.cardTtlMs),
        Math.ceil(ttl.cvvTtlMs),
      ],
    ]);
    return replaced === 1;
  }

  async putCvv(token: string, record: StoredCvv, ttlMs: number): Promise<void> {
    await this.writeAcknowledged([['set', cvvKey(token), serializeCvv(record), 'PX', Math.max(1, Math.ceil(ttlMs))]]);
  }

  async getFingerprintKey(): Promise<string | null> {
    return this.run(() => this.redis.get(FINGERPRINT_KEY_KEY));
  }

  /** Acknowledged like a card: a fingerprint key lost in a failover would change every fingerprint. */
  async createFingerprintKey(stored: string): Promise<string> {
    const [kept] = await this.writeAcknowledged([['tesseraCreateIfAbsent', FINGERPRINT_KEY_KEY, stored]]);
    if (typeof kept !== 'string') throw storeUnavailable(new Error('the fingerprint key was not stored'));
    return kept;
  }

  async replaceFingerprintKey(expected: string, next: string): Promise<boolean> {
    const [replaced] = await this.writeAcknowledged([['tesseraReplaceIfUnchanged', FINGERPRINT_KEY_KEY, expected, next]]);
    return replaced === 1;
  }

  // Merchant KEKs (app/merchantKeys.ts MerchantKekStore).
  async getMerchantKek(merchantId: string, mode: string): Promise<{ stored: string | null; shredded: Record<string, string> }> {
    const [stored, shredded] = await this.run(() =>
      Promise.all([this.redis.get(merchantKekKey(merchantId, mode)), this.redis.hgetall(shreddedKeksKey(merchantId, mode))]),
    );
    return { stored, shredded };
  }

  /** Acknowledged like a card: a KEK lost in a failover would take every record under it along. */
  async createMerchantKek(merchantId: string, mode: string, stored: string): Promise<string> {
    const [kept] = await this.writeAcknowledged([['tesseraCreateIfAbsent', merchantKekKey(merchantId, mode), stored]]);
    if (typeof kept !== 'string') throw storeUnavailable(new Error('the merchant key was not stored'));
    return kept;
  }

  async replaceMerchantKek(merchantId: string, mode: string, expected: string, next: string): Promise<boolean> {
    const [replaced] = await this.writeAcknowledged([['tesseraReplaceIfUnchanged', merchantKekKey(merchantId, mode), expected, next]]);
    return replaced === 1;
  }

  async shredMerchantKek(merchantId: string, mode: string, at: string): Promise<string> {
    const [id] = await this.writeAcknowledged([
      ['tesseraShredKek', merchantKekKey(merchantId, mode), shreddedKeksKey(merchantId, mode), at],
    ]);
    if (typeof id !== 'string') throw storeUnavailable(new Error('the merchant key was not shredded'));
    return id;
  }

  async findByFingerprint(fingerprint: string): Promise<string | null> {
    return this.run(() => this.redis.get(fingerprintIndexKey(fingerprint)));
  }

  /**
   * Acknowledged like a card (replica:N: WAIT on the entry's master): an entry that a failover to a
   * lagging replica loses would let the next dedupe make a second token while the first lives.
   */
  async claimFingerprint(fingerprint: string, token: string, replacing: string | null, ttlMs: number): Promise<string> {
    const [holder] = await this.writeAcknowledged([
      ['tesseraClaimFingerprint', fingerprintIndexKey(fingerprint), token, replacing ?? '', Math.max(1, Math.ceil(ttlMs))],
    ]);
    if (typeof holder !== 'string') throw storeUnavailable(new Error('the fingerprint index gave no holder'));
    return holder;
  }

  /** GETs sent together: auto-pipelining makes them one round trip (per master in a Cluster). */
  async findByFingerprints(fingerprints: readonly string[]): Promise<Array<string | null>> {
    if (fingerprints.length === 0) return [];
    return this.run(() => Promise.all(fingerprints.map((fingerprint) => this.redis.get(fingerprintIndexKey(fingerprint)))));
  }

  /**
   * One Redis: every claim's script in one pipeline, then one WAIT for all of them (a batch costs
   * one round trip and one acknowledgement instead of one each). A Cluster's entries live in
   * their fingerprints' slots, which one pipeline and its WAIT cannot span: claimed one by one.
   */
  async claimFingerprints(claims: readonly FingerprintClaim[]): Promise<string[]> {
    if (claims.length === 0) return [];
    if (this.redis instanceof Cluster) {
      return Promise.all(claims.map((c) => this.claimFingerprint(c.fingerprint, c.token, c.replacing, c.ttlMs)));
    }
    const holders = await this.writeAcknowledged(
      claims.map((c) => [
        'tesseraClaimFingerprint',
        fingerprintIndexKey(c.fingerprint),
        c.token,
        c.replacing ?? '',
        Math.max(1, Math.ceil(c.ttlMs)),
      ]),
    );
    if (holders.length !== claims.length || holders.some((holder) => typeof holder !== 'string')) {
      throw storeUnavailable(new Error('the fingerprint index gave no holder'));
    }
    return holders as string[];
  }

  async releaseFingerprint(fingerprint: string, token: string): Promise<void> {
    await this.run(() => this.scripts.tesseraReleaseFingerprint(fingerprintIndexKey(fingerprint), token));
  }

  async findAlias(merchantId: string, mode: string, aliasDigest: string): Promise<string | null> {
    return this.run(() => this.redis.get(aliasIndexKey(merchantId, mode, aliasDigest)));
  }

  /** Acknowledged like the fingerprint index: an alias lost in a failover could be handed out twice. */
  async claimAlias(merchantId: string, mode: string, aliasDigest: string, token: string, ttlMs: number): Promise<boolean> {
    const [reply] = await this.writeAcknowledged([
      ['set', aliasIndexKey(merchantId, mode, aliasDigest), token, 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX'],
    ]);
    return reply === 'OK';
  }

  async releaseAliases(merchantId: string, mode: string, aliasDigests: readonly string[], token: string): Promise<void> {
    await this.run(() =>
      Promise.all(aliasDigests.map((digest) => this.scripts.tesseraReleaseFingerprint(aliasIndexKey(merchantId, mode, digest), token))),
    );
  }

  async aliasesOf(token: string): Promise<Record<string, string>> {
    return this.run(() => this.redis.hgetall(tokenAliasesKey(token)));
  }

  async addTokenAlias(token: string, format: string, alias: string, ttlMs: number): Promise<string> {
    const [kept] = await this.writeAcknowledged([
      ['tesseraAddTokenAlias', tokenAliasesKey(token), format, alias, Math.max(1, Math.ceil(ttlMs))],
    ]);
    if (typeof kept !== 'string') throw storeUnavailable(new Error('the token gave no alias for the format'));
    return kept;
  }

  async extendAliases(merchantId: string, mode: string, token: string, aliasDigests: readonly string[], ttlMs: number): Promise<void> {
    const ms = Math.max(1, Math.ceil(ttlMs));
    await this.run(() =>
      Promise.all([
        this.redis.pexpire(tokenAliasesKey(token), ms),
        ...aliasDigests.map((digest) => this.scripts.tesseraExtendIfNames(aliasIndexKey(merchantId, mode, digest), token, ms)),
      ]),
    );
  }

  /**
   * One write and then (replica:N) WAIT in the same pipeline, as for save: the write's reply once
   * it is acknowledged at the VAULT_WRITE_ACK level; otherwise the call fails (service_unavailable),
   * though the write itself may have landed (each caller's write may be repeated).
   */
  private async writeAcknowledged(commands: PipelineCommand[]): Promise<unknown[]> {
    return this.run(() => this.writer.write(commands));
  }

  async delete(token: string): Promise<boolean> {
    const results = await this.run(async () => {
      const res = await this.redis.multi().del(cardKey(token)).del(cvvKey(token)).del(tokenAliasesKey(token)).exec();
      if (res === null) throw new Error('redis transaction was aborted');
      for (const [err] of res) if (err) throw err;
      return res;
    });
    return results[0]?.[1] === 1;
  }

  /**
   * SCAN visits one server. In Cluster mode every master is scanned in turn, sorted by address so
   * a resumed run walks them in the same order; the cursor is then `<master index>:<cursor>`.
   * (A resharding during a run can move keys between masters; rerun with --restart afterwards.)
   */
  async scanTokens(cursor: string, count: number): Promise<{ cursor: string; tokens: string[] }> {
    const step = await this.scanKeys(`${CARD_KEY_PREFIX}*`, cursor, count);
    return { cursor: step.cursor, tokens: step.keys.map(tokenOfCardKey).filter((t): t is string => t !== undefined) };
  }

  /** One SCAN step over the merchant KEKs (rewrap moves them to the current root key), as scanTokens. */
  async scanMerchantKeks(cursor: string, count: number): Promise<{ cursor: string; owners: Array<{ merchantId: string; mode: string }> }> {
    const step = await this.scanKeys(`${MERCHANT_KEK_KEY_PREFIX}*`, cursor, count);
    return { cursor: step.cursor, owners: step.keys.map(ownerOfMerchantKekKey).filter((o) => o !== undefined) };
  }

  private async scanKeys(match: string, cursor: string, count: number): Promise<{ cursor: string; keys: string[] }> {
    if (!(this.redis instanceof Cluster)) {
      const standalone = this.redis;
      const [next, keys] = await this.run(() => standalone.scan(cursor, 'MATCH', match, 'COUNT', count));
      return { cursor: next, keys };
    }
    const masters = primariesOf(this.redis).sort((a, b) => nodeName(a).localeCompare(nodeName(b)));
    const [indexText, nodeCursor] = cursor === '0' ? ['0', '0'] : cursor.split(':');
    const index = Number(indexText);
    const node = masters[index];
    if (node === undefined || nodeCursor === undefined) {
      if (cursor === '0') return { cursor: '0', keys: [] };
      throw new Error(`scan cursor ${cursor} does not match this cluster (${masters.length} masters); rerun with --restart`);
    }
    const [next, keys] = await this.run(() => node.scan(nodeCursor, 'MATCH', match, 'COUNT', count));
    if (next !== '0') return { cursor: `${index}:${next}`, keys };
    return { cursor: index + 1 < masters.length ? `${index + 1}:0` : '0', keys };
  }

  async readRaw(kind: RecordKind, token: string): Promise<RawRecord | null> {
    return this.run(() => this.redis.getBuffer(recordKey(kind, token)));
  }

  async replaceRaw(kind: RecordKind, token: string, expected: RawRecord | string, next: RawRecord | string): Promise<boolean> {
    const replaced = await this.run(() => this.scripts.tesseraReplaceIfUnchanged(recordKey(kind, token), expected, next));
    return replaced === 1;
  }

  async getCheckpoint(name: string): Promise<string | null> {
    return this.run(() => this.redis.get(checkpointKey(name)));
  }

  async setCheckpoint(name: string, value: string | null): Promise<void> {
    await this.run(async () => {
      if (value === null) await this.redis.del(checkpointKey(name));
      else await this.redis.set(checkpointKey(name), value);
    });
  }

  async ping(): Promise<StoreHealth> {
    try {
      if (this.redis instanceof Cluster) {
        // Every master: a token on an unreachable master's slots could be neither written nor read.
        if (this.redis.status !== 'ready') throw new Error('cluster not ready');
        const masters = primariesOf(this.redis);
        if (masters.length === 0) throw new Error('no masters');
        await Promise.all(masters.map((node) => node.ping()));
        return { ok: true, detail: `redis cluster ok (${masters.length} masters)` };
      }
      await this.redis.ping();
      return { ok: true, detail: 'redis ok' };
    } catch {
      return { ok: false, detail: `redis unavailable (connection ${this.redis.status})` };
    }
  }

  /** QUIT lets pending replies arrive; when not connected, stop reconnecting at once instead. */
  async close(): Promise<void> {
    if (this.redis.status === 'ready') {
      try {
        await this.redis.quit();
        return;
      } catch {
        // fall through to a hard disconnect
      }
    }
    this.redis.disconnect();
  }

  private async run<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await this.withinDeadline(op);
    } catch (err) {
      throw storeUnavailable(err);
    }
  }

  /**
   * REDIS_COMMAND_TIMEOUT_MS bounds a whole store operation, not only each command once it is
   * sent: with auto-pipelining a command can first wait behind a stalled pipeline for a full
   * commandTimeout and then run its own (measured: 2.0 s for a 1.0 s setting).
   */
  private withinDeadline<T>(op: () => Promise<T>): Promise<T> {
    return withDeadline(op(), this.operationTimeoutMs, () => new Error(`no answer from redis within ${this.operationTimeoutMs} ms`));
  }
}

/** Rounds of redirections (MOVED) and retries (ASK, CLUSTERDOWN, TRYAGAIN) one card write gets. */
const MAX_ATTEMPTS = 5;
/** Pause before retrying after CLUSTERDOWN/TRYAGAIN (ioredis's retryDelayOnClusterDown default). */
const RETRY_DELAY_MS = 100;

/** How one entry's transaction fared on the node it was sent to. */
type WriteResult = { kind: 'saved' } | { kind: 'failed'; error: unknown } | { kind: 'moved'; to: string } | { kind: 'retry' };

const SAVED: SaveOutcome = { saved: true };

function storeUnavailable(cause: unknown): TesseraError {
  return redisUnavailable(cause, 'The card store is temporarily unavailable.');
}

function failedWith(cause: unknown): SaveOutcome {
  return { saved: false, error: storeUnavailable(cause) };
}

/**
 * A new card's fingerprint index entry, written only if absent (SET NX: no script, no read-back):
 * the earliest live token of a card stays the one `dedupe` answers, and the entry lives as long as
 * that card. Provisional tokens are left out until retained (a browser token may never be kept).
 */
function indexCommand(entry: CardEntryToSave): [string, ...Array<string | number>] | undefined {
  const { fingerprint, provisional } = entry.card;
  if (fingerprint === undefined || provisional === true) return undefined;
  return ['set', fingerprintIndexKey(fingerprint), entry.token, 'PX', Math.max(1, Math.ceil(entry.cardTtlMs)), 'NX'];
}

/** The Cluster hash slot of a key (CRC16 of its {hash tag}), as ioredis computes it for routing. */
function slotOf(key: string): number {
  return new Command('set', [key]).getSlot();
}

/** Resolves once the client has re-read the slot map (or failed to); never rejects. */
function refreshSlots(cluster: Cluster): Promise<void> {
  return new Promise((resolve) => cluster.refreshSlotsCache(() => resolve()));
}

function nodeName(node: Redis): string {
  return `${node.options.host ?? ''}:${node.options.port ?? ''}`;
}

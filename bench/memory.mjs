/**
 * Redis memory per stored card (issue 30): BENCH_MEMORY_CARDS (100,000) generated cards (distinct,
 * Luhn-valid, test BIN 424242, live mode: test mode takes only the published test cards) are
 * tokenized through the vault's TokenizeBatch, the call the gateway makes for POST /v1/token (it
 * batches concurrent requests into it), every second one with dedupe, none with a CVV; straight
 * to the vault because through the gateway 100,000 cards take minutes here. Then every key
 * the vault wrote is weighed with MEMORY USAGE (SAMPLES 0: every element of a set or hash), by
 * kind, and set against INFO used_memory's growth over the same time, less what the gateway's own
 * keys (the request log above all) grew meanwhile. Then BENCH_MEMORY_CVVS (2,000) more cards with
 * a CVV, through the gateway's POST /v1/token, give what a CVV costs while it lives. Between the two, one
 * token.expiring_soon pass over the stored cards is timed (BENCH_MEMORY_SWEEP=0 skips it). Last, the request log's memory after the load, and
 * the bound its settings put on it (REQUEST_LOG_MAX_ENTRIES per merchant).
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import protos from '@tessera/protos';
import { generatedCardNumber } from './import.mjs';
import { redisCommandStats } from './proxies.mjs';
import { ROUND_THREE_TARGETS } from './targets.mjs';

const BYTES_PER_CARD_TARGET = ROUND_THREE_TARGETS.bytesPerCard;

/** Which part of a stored card (or of the gateway's state) a key is. */
function kindOf(key) {
  if (key.startsWith('tessera:card:{')) return 'card';
  if (key.startsWith('tessera:card:fp:')) return 'fingerprintIndex';
  if (key.startsWith('tessera:card:expiry-index')) return 'expiryIndex';
  if (key.startsWith('tessera:card:cvv-expiry-index')) return 'cvvExpiryIndex';
  if (key.startsWith('tessera:card:aliases:') || key.startsWith('tessera:card:alias:')) return 'aliases';
  if (key.startsWith('tessera:cvv:')) return 'cvv';
  if (key.startsWith('tessera:card:')) return 'vaultOther';
  if (key.startsWith('tessera:request-log:') || key.startsWith('tessera:request-stats:')) return 'requestLog';
  return 'other';
}

const CARD_KINDS = ['card', 'fingerprintIndex', 'expiryIndex', 'aliases', 'vaultOther'];
const CVV_KINDS = ['cvv', 'cvvExpiryIndex'];

async function allKeys(redis) {
  const keys = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'COUNT', 5000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}

/** MEMORY USAGE of every key, summed by kind; keys whose kind matches `count` are counted too. */
async function weigh(redis) {
  const keys = await allKeys(redis);
  const bytes = {};
  const keyCount = {};
  for (let i = 0; i < keys.length; i += 2000) {
    const slice = keys.slice(i, i + 2000);
    const pipeline = redis.pipeline();
    for (const key of slice) pipeline.call('MEMORY', 'USAGE', key, 'SAMPLES', '0');
    const replies = await pipeline.exec();
    slice.forEach((key, j) => {
      const kind = kindOf(key);
      bytes[kind] = (bytes[kind] ?? 0) + Number(replies[j][1] ?? 0);
      keyCount[kind] = (keyCount[kind] ?? 0) + 1;
    });
  }
  return { bytes, keyCount };
}

/**
 * Every merchant's request log stream after the load so far (the other phases' too, in a full run):
 * bytes, entries, and bytes per entry, which times REQUEST_LOG_MAX_ENTRIES bounds one merchant's.
 */
async function weighRequestLogs(redis) {
  const keys = (await allKeys(redis)).filter((key) => key.startsWith('tessera:request-log:'));
  let bytes = 0;
  let entries = 0;
  for (const key of keys) {
    bytes += Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
    entries += Number(await redis.xlen(key));
  }
  return { streams: keys.length, bytes, entries, bytesPerEntry: entries > 0 ? Math.round(bytes / entries) : 0 };
}

async function usedMemory(redis) {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)[1]);
}

function delta(after, before, kinds) {
  return Object.fromEntries(kinds.map((kind) => [kind, (after[kind] ?? 0) - (before[kind] ?? 0)]));
}

const sum = (values) => values.reduce((a, b) => a + b, 0);

/** Tokenizes `count` cards from `first` on, `connections` requests at a time; `body(i)` makes card i's request. */
async function tokenizeAll(pool, apiKey, first, count, connections, body) {
  let next = first;
  const end = first + count;
  let failures = 0;
  const worker = async () => {
    while (next < end) {
      const i = next++;
      const res = await pool.request({
        method: 'POST',
        path: '/v1/token',
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
        body: JSON.stringify(body(i)),
      });
      await res.body.dump();
      if (res.statusCode !== 201) failures++;
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  return failures;
}

/**
 * A batch, again after a pause while the vault is unavailable (on a loaded machine its Redis calls
 * can time out and its health check fail for a moment); then again for the items it refused, so
 * that what is weighed is the cards asked for. Answers the items still refused.
 */
async function callRetrying(call, items) {
  let pending = items;
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await call(pending);
      pending = pending.filter((_, i) => !res.results[i]?.record);
      if (pending.length === 0 || attempt >= 5) return pending.length;
    } catch (err) {
      if (attempt >= 5) throw err;
    }
    await sleep(1000 * attempt);
  }
}

/** The same cards through the vault's TokenizeBatch, `inFlight` calls of `batch` cards at a time. */
async function tokenizeBatches(vaultAddr, first, count, body, { batch = 200, inFlight = 2 } = {}) {
  const client = protos.createVaultClient(vaultAddr);
  let next = first;
  const end = first + count;
  let failures = 0;
  const call = (items) =>
    new Promise((resolve, reject) => client.tokenizeBatch({ items }, (err, res) => (err ? reject(err) : resolve(res))));
  const worker = async () => {
    while (next < end) {
      const start = next;
      next = Math.min(end, next + batch);
      const items = [];
      for (let i = start; i < next; i++) {
        const { number, expiryMonth, expiryYear, holderName, dedupe } = body(i);
        items.push({
          requestId: `bench-memory-${i}`,
          request: {
            merchantId: 'bench-memory',
            number,
            holderName,
            expiryMonth,
            expiryYear,
            dedupe: dedupe === true,
            keyMode: 'MODE_LIVE',
          },
        });
      }
      failures += await callRetrying(call, items);
    }
  };
  try {
    await Promise.all(Array.from({ length: inFlight }, worker));
  } finally {
    client.close();
  }
  return failures;
}

function commandsBetween(before, after) {
  const calls = {};
  let usec = 0;
  for (const [command, { calls: n, usec: u }] of Object.entries(after)) {
    const more = n - (before[command]?.calls ?? 0);
    if (more > 0) calls[command] = more;
    usec += u - (before[command]?.usec ?? 0);
  }
  return { calls, redisMs: Math.round(usec / 1000) };
}

/**
 * One token.expiring_soon pass over the cards just stored, as the vault's sweep runs it (its built
 * dist/, its pacing: SCAN COUNT 1000, GETs sent together, 20 ms between steps), TOKEN_EXPIRING_SOON_DAYS 30, so
 * no card of the bench (expiring next year on) is told: the cost of reading every record. Wall time, and Redis's own time and
 * commands (INFO commandstats, which the bench's other clients barely add to meanwhile).
 */
async function timeExpirySweep(redisUrl, redis) {
  const { RedisCardStore } = await import('@tessera/vault');
  const { sweepExpiringTokens } = await import('../services/vault/dist/app/eventSweeps.js');
  const { RedisExpiryIndex } = await import('../services/vault/dist/store/expiryIndex.js');
  const { RedisEventStore } = await import('@tessera/merchant-data');
  const { createLogger } = await import('@tessera/common');
  const store = RedisCardStore.connect(redisUrl, { commandTimeoutMs: 5000, logger: createLogger('bench', 'silent') });
  const other = new Redis(redisUrl);
  try {
    await store.waitUntilReady(5000);
    const index = new RedisExpiryIndex(other);
    // A pass due, the old index already unlinked: as on the second day after an upgrade.
    await store.setCheckpoint('token-expiring-soon', JSON.stringify({ startedAtMs: 0, cursor: null }));
    const before = await redisCommandStats(redis);
    const started = performance.now();
    const { recorded, scanned } = await sweepExpiringTokens({
      recorder: new RedisEventStore(other),
      store,
      index,
      now: () => new Date(),
      days: 30,
      passEveryMs: 86_400_000,
      budgetMs: Number.POSITIVE_INFINITY,
    });
    const ms = Math.round(performance.now() - started);
    return { ms, scanned, recorded, ...commandsBetween(before, await redisCommandStats(redis)) };
  } finally {
    await store.close();
    other.disconnect();
  }
}

function cardOf(i, withCvv) {
  const year = new Date().getUTCFullYear() + 1 + (i % 5);
  return {
    number: generatedCardNumber(i),
    expiryMonth: (i % 12) + 1,
    expiryYear: year,
    holderName: 'Bench Holder',
    ...(i % 2 === 0 ? { dedupe: true } : {}),
    ...(withCvv ? { cvv: '123' } : {}),
  };
}

export async function memoryPhase({
  gatewayUrl,
  apiKey,
  vaultAddr,
  redisUrl,
  log,
  cards = 100_000,
  cvvs = 2_000,
  connections = 50,
  requestLogMaxEntries,
}) {
  const redis = new Redis(redisUrl);
  const pool = new Pool(gatewayUrl, { connections });
  try {
    const before = await weigh(redis);
    const usedBefore = await usedMemory(redis);
    const started = Date.now();
    log(`memory: tokenizing ${cards} cards (half with dedupe)`);
    const failures = await tokenizeBatches(vaultAddr, 0, cards, (i) => cardOf(i, false));
    const seconds = (Date.now() - started) / 1000;
    const after = await weigh(redis);
    const usedAfter = await usedMemory(redis);
    const stored = cards - failures;
    const cardBytes = delta(after.bytes, before.bytes, CARD_KINDS);
    // What the gateway wrote meanwhile (its request log, rate-limit counters, ...) is not the cards'.
    const gatewayGrowth = sum(Object.values(delta(after.bytes, before.bytes, ['requestLog', 'other'])));
    const perCard = Object.fromEntries(Object.entries(cardBytes).map(([kind, b]) => [kind, Math.round(b / stored)]));
    const bytesPerCard = Math.round(sum(Object.values(cardBytes)) / stored);
    const usedMemoryBytesPerCard = Math.round((usedAfter - usedBefore - gatewayGrowth) / stored);
    let sweep;
    if (process.env.BENCH_MEMORY_SWEEP !== '0') {
      log(`memory: one token.expiring_soon pass over the ${stored} cards`);
      sweep = await timeExpirySweep(redisUrl, redis);
      log(`memory: pass ${JSON.stringify(sweep)}`);
    }

    // A CVV while it lives: its record and its entry in the CVV expiry index.
    log(`memory: tokenizing ${cvvs} more cards with a CVV`);
    const cvvFailures = await tokenizeAll(pool, apiKey, cards, cvvs, Math.min(connections, 20), (i) => cardOf(i, true));
    const withCvv = await weigh(redis);
    const cvvBytes = delta(withCvv.bytes, after.bytes, CVV_KINDS);
    const cvvStored = cvvs - cvvFailures;
    const cvvBytesPerCvv = Math.round(sum(Object.values(cvvBytes)) / Math.max(1, cvvStored));

    const requestLog = await weighRequestLogs(redis);
    const result = {
      cards,
      stored,
      failures: failures + cvvFailures,
      seconds,
      bytesPerCard,
      usedMemoryBytesPerCard,
      perKind: perCard,
      keysPerKind: delta(after.keyCount, before.keyCount, CARD_KINDS),
      sweep,
      cvvs: cvvStored,
      cvvBytesPerCvv,
      cvvPerKind: Object.fromEntries(Object.entries(cvvBytes).map(([kind, b]) => [kind, Math.round(b / Math.max(1, cvvStored))])),
      requestLog: {
        ...requestLog,
        maxEntriesPerMerchant: requestLogMaxEntries,
        boundBytesPerMerchant: requestLog.bytesPerEntry * requestLogMaxEntries,
      },
    };
    log(`memory: ${bytesPerCard} B per stored card (MEMORY USAGE), ${usedMemoryBytesPerCard} B (used_memory)`);
    return result;
  } finally {
    await pool.close();
    redis.disconnect();
  }
}

const verdict = (bytes) => (bytes <= BYTES_PER_CARD_TARGET ? 'ok' : `MISSED by ${bytes - BYTES_PER_CARD_TARGET}`);

export function memoryLines(r) {
  const kinds = Object.entries(r.perKind)
    .filter(([, b]) => b !== 0)
    .map(([kind, b]) => `${kind} ${b}`)
    .join(', ');
  const mb = (b) => (b / 1048576).toFixed(1);
  return [
    `| Redis memory (${r.stored} cards, half with dedupe) | measured | goal |`,
    '|---|---:|---|',
    `| bytes per stored card, MEMORY USAGE (${kinds}) | ${r.bytesPerCard} | <= ${BYTES_PER_CARD_TARGET} ${verdict(r.bytesPerCard)} |`,
    `| bytes per stored card, INFO used_memory growth | ${r.usedMemoryBytesPerCard} | <= ${BYTES_PER_CARD_TARGET} ${verdict(r.usedMemoryBytesPerCard)} |`,
    `| bytes per CVV while it lives (${r.cvvs} CVVs) | ${r.cvvBytesPerCvv} | (info) |`,
    ...(r.sweep
      ? [
          `| token.expiring_soon pass: s (${r.sweep.scanned} cards read, Redis busy ${r.sweep.redisMs} ms: ${Object.entries(r.sweep.calls)
            .map(([c, n]) => `${c} ${n}`)
            .join(', ')}) | ${(r.sweep.ms / 1000).toFixed(1)} | (info) |`,
        ]
      : []),
    `| request log: MB now (${r.requestLog.streams} merchants, ${r.requestLog.entries} entries, ${r.requestLog.bytesPerEntry} B each) | ${mb(r.requestLog.bytes)} | <= ${mb(r.requestLog.boundBytesPerMerchant)} per merchant (REQUEST_LOG_MAX_ENTRIES ${r.requestLog.maxEntriesPerMerchant}) |`,
    '',
  ];
}

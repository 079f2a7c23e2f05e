#!/usr/bin/env node
/**
 * `npm run bench`: starts a private redis-server, the vault, proxy and gateway (built dist/, one
 * process each, as in production), a local PSP and a bare Express echo service, then loads
 *   express  - POST /echo on bare Express (the baseline)
 *   tokenize - POST /v1/token
 *   proxy    - POST /v1/proxy to the local PSP
 *   fair-proxy - bare Express forwarding the same call to the same PSP with undici (bench/fair-proxy.mjs)
 *   psp      - the PSP directly
 * with autocannon, interleaved, for BENCH_ROUNDS rounds, and reports medians and the ratios of
 * each round (interleaving puts every round of every target under the same machine noise).
 * Then it runs every target at a fixed, evenly paced rate of half its measured maximum and
 * reports p50/p99 (see paced()). Then the zero-code proxies of issue 28 (bench/proxies.mjs): an
 * inbound route and the forward proxy, each against the direct call one request at a time and against
 * a bare forwarder under load (BENCH_ONLY=inbound,forward alone). Then webhook delivery end to end:
 * events/s and the lag at half that rate (bench/webhooks.mjs; BENCH_ONLY=webhooks alone). Last, a card
 * import of BENCH_IMPORT_CARDS (1000000) cards from a PGP file: cards/s and the vault's peak RSS
 * (bench/import.mjs; BENCH_ONLY=import alone). And first of these, Redis memory per stored card: BENCH_MEMORY_CARDS
 * (100000) cards stored by the vault's TokenizeBatch, weighed with MEMORY USAGE and INFO used_memory, and the
 * request log's memory after them (bench/memory.mjs; BENCH_ONLY=memory alone).
 * Before that, the latency Tessera adds to a PSP call: PSP direct, /v1/proxy and /v1/token one request
 * at a time (-c 1) and with BENCH_LATENCY_CONNECTIONS (10) clients (bench/latency.mjs). Every figure
 * is printed with its target beside it (bench/targets.mjs).
 * Results go to bench/results/latest.json (git-ignored).
 *
 * Tuning knobs (environment): BENCH_ROUNDS (5), BENCH_DURATION_S (5), BENCH_CONNECTIONS (50),
 * BENCH_FIXED_ROUNDS (2), BENCH_FIXED_DURATION_S (4), BENCH_LABEL (also writes <label>.json),
 * BENCH_ONLY (comma list of targets; inbound and forward are the zero-code proxies'), BENCH_SEQ_REQUESTS (1000; 0 skips the latency phase),
 * BENCH_WEBHOOK_EVENTS (20000), BENCH_WEBHOOK_LAG_S (5), BENCH_MEMORY_CARDS (100000), BENCH_MEMORY_CVVS (2000),
 * BENCH_LATENCY_CONNECTIONS (10), BENCH_LATENCY_ONLY (stop after the latency phase), BENCH_LATENCY_TARGETS (psp,proxy,tokenize), BENCH_LATENCY_WARMUP (2000 requests per target first), BENCH_NODE_ARGS (flags for the service processes), and any service variable such as GATEWAY_WORKERS, which
 * is passed through to the services.
 */
/* global AbortController */
import autocannon from 'autocannon';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setInterval, setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import { ensureSandboxCertificate } from '@tessera/sandbox-psp';
import { PortBlock, ServiceStack, tcpOpen, waitFor } from '@tessera/stack';
import { floorP50Of, hopLines, measureHops } from './hops.mjs';
import { addedLatency, LATENCY_TARGETS, latencyPhase, latencyTable } from './latency.mjs';
import {
  checkZeroCode,
  closeZeroCode,
  prepareZeroCode,
  redisCommandCount,
  ZERO_CODE_PAIRS,
  zeroCodeLatency,
  zeroCodePairsOf,
  zeroCodeThroughput,
} from './proxies.mjs';
import { roundThreeLines, targetLines, zeroCodeLines } from './targets.mjs';
import { webhookLines, webhookPhase } from './webhooks.mjs';
import { importLines, importPhase } from './import.mjs';
import { memoryLines, memoryPhase } from './memory.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RESULTS = path.join(ROOT, 'bench', 'results');
const env = process.env;

const settings = {
  rounds: Number(env.BENCH_ROUNDS ?? 5),
  durationS: Number(env.BENCH_DURATION_S ?? 5),
  connections: Number(env.BENCH_CONNECTIONS ?? 50),
  fixedRounds: Number(env.BENCH_FIXED_ROUNDS ?? 2),
  fixedDurationS: Number(env.BENCH_FIXED_DURATION_S ?? 4),
  warmupS: 2,
  seqRequests: Number(env.BENCH_SEQ_REQUESTS ?? 1000),
  latencyConnections: Number(env.BENCH_LATENCY_CONNECTIONS ?? 10),
  latencyWarmup: Number(env.BENCH_LATENCY_WARMUP ?? 2000),
};
const ONLY = env.BENCH_ONLY ? env.BENCH_ONLY.split(',') : undefined;
/** The zero-code proxies asked for ('inbound', 'forward'); the inbound service and the forward proxy run only for them. */
const ZERO_CODE = zeroCodePairsOf(ONLY);
const ZERO_CODE_NAMES = Object.values(ZERO_CODE_PAIRS).flatMap((p) => [p.target, p.fair]);
/** BENCH_ONLY names zero-code targets only: the /v1 latency phase is skipped too. */
const ONLY_ZERO_CODE = ONLY !== undefined && ONLY.every((name) => ZERO_CODE_NAMES.includes(name));

const started = Date.now();

function log(line) {
  process.stdout.write(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(3)}s] ${line}\n`);
}

// A port block of its own, next to the test workers' (12000-19999): never an ephemeral port.
const ports = new PortBlock(20_000);
/** Set by main() once the ports are known; every process of the bench starts and stops with it. */
let stack;

let stopping = false;
async function stopAll(code) {
  stopping = true;
  await stack?.stop();
  if (code !== undefined) process.exit(code);
}
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => void stopAll(130));

/** Redis commands by name per request, most frequent first. */
function perRequest(commands, requests) {
  return Object.fromEntries(
    Object.entries(commands)
      .map(([name, calls]) => [name, requests ? calls / requests : 0])
      .sort((a, b) => b[1] - a[1]),
  );
}

/** /v1/proxy's -c 1 added p50 (ms), when the latency phase measured it and the PSP direct. */
function sequentialAddedP50(latency) {
  return latency.sequential?.proxy && latency.sequential?.psp ? addedLatency(latency.sequential).proxy.p50 : undefined;
}

/** Resident set size in MB of a process and all its descendants (the gateway's cluster workers). */
function descendants(pid) {
  const out = [pid];
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      const kids = fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
      for (const kid of kids.split(/\s+/).filter(Boolean)) out.push(...descendants(Number(kid)));
    }
  } catch {
    // the process is gone
  }
  return out;
}

/** CPU seconds (user + system) used so far by a process and its descendants; 100 ticks per second on Linux. */
function cpuSeconds(pid) {
  let ticks = 0;
  for (const p of descendants(pid)) {
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // the process is gone
    }
  }
  return ticks / 100;
}

/** How often the threads of a process and its descendants blocked and were woken again. */
function voluntarySwitches(pid) {
  let switches = 0;
  for (const p of descendants(pid)) {
    try {
      for (const tid of fs.readdirSync(`/proc/${p}/task`)) {
        const match = /voluntary_ctxt_switches:\s+(\d+)/.exec(fs.readFileSync(`/proc/${p}/task/${tid}/status`, 'utf8'));
        if (match) switches += Number(match[1]);
      }
    } catch {
      // the process or thread is gone
    }
  }
  return switches;
}

function rssMb(pid) {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Samples RSS of each service every 250 ms; keeps the peak per process and of the sum. */
function rssSampler(services) {
  const peak = Object.fromEntries(services.map(({ name }) => [name, { processMaxMb: 0, totalMaxMb: 0, processes: 1 }]));
  const ac = new AbortController();
  const sample = () => {
    for (const { name, pid } of services) {
      const values = descendants(pid).map(rssMb);
      const p = peak[name];
      p.processMaxMb = Math.max(p.processMaxMb, ...values);
      p.totalMaxMb = Math.max(
        p.totalMaxMb,
        values.reduce((a, b) => a + b, 0),
      );
      p.processes = values.length;
    }
  };
  const done = (async () => {
    try {
      for await (const _ of setInterval(250, undefined, { signal: ac.signal })) sample();
    } catch {
      // aborted
    }
  })();
  return {
    peak,
    async stop() {
      sample();
      ac.abort();
      await done;
    },
  };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

async function load(target, { durationS } = {}) {
  const result = await autocannon({
    url: target.url,
    method: 'POST',
    headers: target.headers,
    body: target.body,
    connections: settings.connections,
    duration: durationS ?? settings.durationS,
  });
  const ok = result.non2xx === 0 ? result.requests.total : result['2xx'];
  return {
    rps: ok / (result.duration || durationS || settings.durationS),
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    requests: result.requests.total,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
  };
}

/**
 * Open-loop load at a fixed rate: one request every 1/rate seconds, evenly spaced, over at most
 * `connections` keep-alive connections. autocannon's overallRate is not used for this because
 * it sends each second's quota as fast as it can and then idles, so half of every second runs
 * at saturation. Latency counts from the moment a request was due, so a request that had to
 * wait for a free connection is charged for the wait (no coordinated omission).
 */
async function paced(target, { rate, durationS }) {
  const url = new URL(target.url);
  const pool = new Pool(url.origin, { connections: settings.connections, pipelining: 1 });
  const total = Math.max(1, Math.floor(rate * durationS));
  // Preallocated and no promise kept per request: the generator's own garbage collections would
  // otherwise pause it for tens of milliseconds, and every request due meanwhile would be charged.
  const latencies = new Float64Array(total);
  let measured = 0;
  let errors = 0;
  let non2xx = 0;
  let inFlight = 0;
  let allSent = false;
  let drained = () => {};
  const interval = 1000 / rate;
  const settle = () => {
    inFlight--;
    if (allSent && inFlight === 0) drained();
  };
  const fire = (due) => {
    inFlight++;
    pool
      .request({ path: url.pathname, method: 'POST', headers: target.headers, body: target.body })
      .then(async (res) => {
        await res.body.dump();
        if (res.statusCode >= 300) non2xx++;
        else latencies[measured++] = performance.now() - due;
      })
      .catch(() => {
        errors++;
      })
      .finally(settle);
  };
  const start = performance.now();
  let sent = 0;
  while (sent < total) {
    const now = performance.now();
    while (sent < total && start + sent * interval <= now) {
      fire(start + sent * interval);
      sent++;
    }
    if (sent < total) await sleep(Math.max(0, start + sent * interval - performance.now()));
  }
  await new Promise((resolve) => {
    drained = resolve;
    allSent = true;
    if (inFlight === 0) resolve();
  });
  const elapsedS = (performance.now() - start) / 1000;
  await pool.close();
  const sorted = latencies.subarray(0, measured).sort();
  const pct = (p) => (measured ? sorted[Math.min(measured - 1, Math.floor((p / 100) * measured))] : NaN);
  return {
    rate,
    rps: measured / elapsedS,
    p50: pct(50),
    p99: pct(99),
    max: pct(100),
    requests: total,
    errors,
    timeouts: 0,
    non2xx,
  };
}

function gitCommit() {
  const res = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' });
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' });
  return res.status === 0 ? `${res.stdout.trim()}${dirty.stdout.trim() ? '+dirty' : ''}` : 'unknown';
}

async function main() {
  const [redisPort, vaultPort, proxyPort, gatewayPort, pspPort, expressPort, fairProxyPort, webhookPort] = await Promise.all(
    Array.from({ length: 8 }, () => ports.freePort()),
  );
  // The zero-code proxies' ports: the inbound service, the gateway's forward proxy, the PSP over HTTPS
  // and the two bare forwarders.
  const [inboundPort, forwardProxyPort, pspTlsPort, fairInboundPort, fairForwardPort] = await Promise.all(
    Array.from({ length: 5 }, () => ports.freePort()),
  );
  const zeroCode = ZERO_CODE.length > 0;
  const passThrough = Object.fromEntries(
    Object.entries(env).filter(([k]) =>
      /^(GATEWAY_|VAULT_|PROXY_|PSP_|RATE_LIMIT_|REQUEST_LOG_|REDIS_COMMAND|LOG_LEVEL|NODE_OPTIONS|UV_|WEBHOOK_|INBOUND_|IMPORT_)/.test(k),
    ),
  );
  stack = new ServiceStack({
    // Production-like durability (append-only file, fsync every second) on a private port.
    redis: { port: redisPort, appendfsync: 'everysec' },
    ports: { vault: [vaultPort], proxy: [proxyPort], gateway: gatewayPort, ...(zeroCode ? { inbound: inboundPort } : {}) },
    env: {
      PATH: env.PATH,
      HOME: env.HOME,
      // As the integration harness runs them: real secrets and Redis, plaintext gRPC on loopback.
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      VAULT_KEYS: `bench1:${randomBytes(32).toString('base64')}`,
      API_KEY_PEPPER: randomBytes(32).toString('hex'),
      // The local PSP is on loopback, which the proxy refuses unless told otherwise.
      PSP_ALLOWED_CIDRS: '127.0.0.1/32',
      // ... and on a free port, which the proxy refuses unless listed; so is the webhook receiver, and
      // for the zero-code proxies the PSP's HTTPS port and the inbound route's upstream (the echo).
      PSP_ALLOWED_PORTS: [pspPort, webhookPort, ...(zeroCode ? [pspTlsPort, expressPort] : [])].join(','),
      // One key drives thousands of requests per second: keep the limiter's cost in the numbers,
      // not its 429s.
      RATE_LIMIT_PER_KEY_PER_SECOND: '100000000',
      // The import phase starts measuring at its upload's end: a queued import is picked up soon after.
      IMPORT_POLL_INTERVAL_MS: '200',
      ...passThrough,
    },
    // The forward proxy listens on the gateway; the proxy trusts the bench PSP's test CA as it would a
    // PSP's public one (scripts/start.mjs does the same for the sandbox PSP); nobody else does.
    serviceEnv: (name) => {
      if (!zeroCode) return {};
      if (name === 'gateway') return { FORWARD_PROXY_PORT: String(forwardProxyPort) };
      if (name === 'proxy') return { NODE_EXTRA_CA_CERTS: pspTls.caFile };
      // As for the key's rate limit: every request carries the same card from the same address, so
      // the card-testing limits are raised, not disabled; their counters stay in the numbers.
      if (name === 'inbound') {
        return {
          INBOUND_CARDS_PER_ROUTE_PER_MINUTE: '100000000',
          INBOUND_CARDS_PER_IP_PER_MINUTE: '100000000',
          INBOUND_DISTINCT_CARDS_PER_IP_PER_HOUR: '100000000',
          ...Object.fromEntries(Object.entries(passThrough).filter(([k]) => k.startsWith('INBOUND_'))),
        };
      }
      return {};
    },
    // e.g. BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the services under load.
    nodeArgs: env.BENCH_NODE_ARGS ? env.BENCH_NODE_ARGS.split(/\s+/).filter(Boolean) : [],
    // Each process writes straight to bench/results/logs/<name>.log, not through this process.
    processOptions: (name) => ({
      logFile: path.join(RESULTS, 'logs', `${name}.log`),
      onUnexpectedExit: (code, signal) => {
        if (stopping) return;
        log(`${name} exited unexpectedly (${signal ?? code}); see bench/results/logs/${name}.log`);
        void stopAll(1);
      },
    }),
  });
  stack.env.TESSERA_STATE_DIR = stack.tempDir('tessera-bench-state-');
  // A test CA and a certificate for `localhost`, which the proxy resolves to 127.0.0.1 without DNS.
  const workDir = stack.tempDir('tessera-bench-work-');
  const pspTls = zeroCode ? ensureSandboxCertificate(path.join(workDir, 'psp-tls'), ['localhost']) : undefined;
  const node = process.execPath;
  const psp = stack.spawnNode('psp', 'bench/psp.mjs', { PATH: env.PATH }, [
    String(pspPort),
    ...(pspTls ? [String(pspTlsPort), pspTls.certFile, pspTls.keyFile] : []),
  ]);
  const expressEcho = stack.spawnNode('express-echo', 'bench/express-echo.mjs', { PATH: env.PATH, NODE_ENV: 'production' }, [
    String(expressPort),
  ]);
  const fairProxy = stack.spawnNode('fair-proxy', 'bench/fair-proxy.mjs', { PATH: env.PATH, NODE_ENV: 'production' }, [
    String(fairProxyPort),
  ]);
  const bareForwarders = zeroCode
    ? {
        'fair-inbound': stack.spawnNode('fair-inbound', 'bench/fair-inbound.mjs', { PATH: env.PATH, NODE_ENV: 'production' }, [
          String(fairInboundPort),
          `http://127.0.0.1:${expressPort}/echo`,
        ]),
        'fair-forward': stack.spawnNode('fair-forward', 'bench/fair-forward.mjs', { PATH: env.PATH, NODE_ENV: 'production' }, [
          String(fairForwardPort),
          pspTls.certFile,
          pspTls.keyFile,
          pspTls.caFile,
        ]),
      }
    : {};
  await stack.start();
  const serviceEnv = stack.env;
  const services = { vault: stack.vault, proxy: stack.proxy, gateway: stack.gateway };
  const redis = stack.redisServer.process;
  const gatewayUrl = stack.baseUrl;
  await waitFor(() => tcpOpen(pspPort), 'psp', 20_000);
  await waitFor(() => tcpOpen(expressPort), 'express echo', 20_000);
  await waitFor(() => tcpOpen(fairProxyPort), 'fair proxy', 20_000);
  if (zeroCode) {
    await waitFor(() => tcpOpen(pspTlsPort), 'psp over https', 20_000);
    await waitFor(() => tcpOpen(forwardProxyPort), 'forward proxy', 20_000);
    await waitFor(() => tcpOpen(fairInboundPort), 'fair inbound', 20_000);
    await waitFor(() => tcpOpen(fairForwardPort), 'fair forward', 20_000);
  }
  log(`redis, vault, proxy, gateway, psp and express echo${zeroCode ? ', inbound, the forward proxy and the bare forwarders' : ''} are up`);

  // An API key made the way an operator makes one: with the keys CLI.
  const keyOf = (merchant, mode) => {
    const cli = spawnSync(
      node,
      [path.join(ROOT, 'services/admin/dist/cli/keys.js'), 'create', '--merchant', merchant, '--mode', mode, '--json'],
      {
        cwd: ROOT,
        env: serviceEnv,
        encoding: 'utf8',
        timeout: 15_000,
      },
    );
    if (cli.status !== 0) throw new Error(`keys CLI failed: ${cli.stderr}`);
    return JSON.parse(cli.stdout.trim().split('\n').pop()).apiKey;
  };
  const apiKey = keyOf('bench', 'test');
  // Generated cards are live-mode cards: test mode takes only the published test cards.
  const liveKeyOf = (merchant) => keyOf(merchant, 'live');

  const card = {
    number: '4242424242424242',
    holderName: 'Ada Lovelace',
    expiryMonth: 12,
    expiryYear: new Date().getUTCFullYear() + 3,
    cvv: '123',
  };
  const cardBody = JSON.stringify(card);
  const json = { 'content-type': 'application/json' };
  const tokenRes = await fetch(`${gatewayUrl}/v1/token`, { method: 'POST', headers: { ...json, 'x-api-key': apiKey }, body: cardBody });
  if (tokenRes.status !== 201) throw new Error(`tokenize answered ${tokenRes.status}: ${await tokenRes.text()}`);
  const { token } = await tokenRes.json();

  const pspUrl = `http://127.0.0.1:${pspPort}/v1/charges`;
  const pspTemplate = JSON.stringify({
    amount: 1000,
    currency: 'eur',
    // No [CARD_CVV]: the CVV may be used once only (PCI DSS), and every request here reuses one token.
    card: { number: '[CARD_NUMBER]', exp_month: '[CARD_EXPIRY_MONTH]', exp_year: '[CARD_EXPIRY_YEAR]', name: '[CARD_HOLDER]' },
  });
  const pspHeaders = { 'Content-Type': 'application/json', Authorization: 'Bearer sk_bench' };
  const rendered = pspTemplate
    .replace('[CARD_NUMBER]', card.number)
    .replace('[CARD_EXPIRY_MONTH]', String(card.expiryMonth))
    .replace('[CARD_EXPIRY_YEAR]', String(card.expiryYear))
    .replace('[CARD_HOLDER]', card.holderName);

  const allTargets = [
    { name: 'express', url: `http://127.0.0.1:${expressPort}/echo`, headers: json, body: cardBody },
    { name: 'tokenize', url: `${gatewayUrl}/v1/token`, headers: { ...json, 'x-api-key': apiKey }, body: cardBody },
    {
      name: 'proxy',
      url: `${gatewayUrl}/v1/proxy`,
      headers: { ...json, 'x-api-key': apiKey },
      body: JSON.stringify({ method: 'post', token, pspUrl, pspHeaders, pspBody: pspTemplate }),
    },
    {
      name: 'fair-proxy',
      url: `http://127.0.0.1:${fairProxyPort}/forward`,
      headers: json,
      // The same call as /v1/proxy's, with the body already rendered: what the PSP receives is identical.
      body: JSON.stringify({ method: 'post', token, pspUrl, pspHeaders, pspBody: rendered }),
    },
    { name: 'psp', url: pspUrl, headers: { 'content-type': 'application/json', authorization: 'Bearer sk_bench' }, body: rendered },
  ];
  const targets = allTargets.filter((t) => !ONLY || ONLY.includes(t.name));

  // Every target must work before it is measured: a fast stream of errors is not throughput.
  for (const t of targets) {
    const res = await fetch(t.url, { method: 'POST', headers: t.headers, body: t.body });
    if (res.status >= 300) throw new Error(`${t.name} answered ${res.status}: ${await res.text()}`);
  }
  const zeroCodeTargets = zeroCode
    ? await prepareZeroCode({
        root: ROOT,
        env: serviceEnv,
        workDir,
        merchant: 'bench',
        apiKey,
        gatewayUrl,
        inboundUrl: stack.inboundUrl,
        upstreamUrl: `http://127.0.0.1:${expressPort}/echo`,
        fairInboundUrl: `http://127.0.0.1:${fairInboundPort}/bench-shop`,
        pspTlsOrigin: `https://localhost:${pspTlsPort}`,
        pspCaFile: pspTls.caFile,
        forwardProxyPort,
        fairForwardPort,
        connections: settings.connections,
        pairs: ZERO_CODE,
      })
    : undefined;
  // The inbound service reads its routes at most every INBOUND_ROUTE_CACHE_MS: the new route may need that long.
  for (let attempt = 1; zeroCodeTargets; attempt++) {
    try {
      await checkZeroCode(zeroCodeTargets);
      break;
    } catch (err) {
      if (attempt >= 40) throw err;
      await sleep(250);
    }
  }
  const zeroCodeReport = {};

  // Latency Tessera adds to a PSP call, before any saturating load has grown the heaps.
  const latencyTargets = (env.BENCH_LATENCY_TARGETS ?? 'psp,proxy,tokenize')
    .split(',')
    .map((name) => allTargets.find((t) => t.name === name));
  const latency = {};
  const measured = [...Object.entries(services), ['redis', redis], ['psp', psp]].map(([name, child]) => ({ name, pid: child.pid }));
  // Whether the time one request at a time is work or waiting: what each process spends per request.
  const sampleProcesses = () => {
    const self = process.cpuUsage();
    return {
      'CPU µs': { ...Object.fromEntries(measured.map(({ name, pid }) => [name, cpuSeconds(pid) * 1e6])), loadgen: self.user + self.system },
      'wake-ups': Object.fromEntries(measured.map(({ name, pid }) => [name, voluntarySwitches(pid)])),
    };
  };
  // BENCH_ONLY=import (or webhooks,import) measures no request latency, nor do the zero-code targets alone.
  if (
    settings.seqRequests > 0 &&
    !ONLY_ZERO_CODE &&
    !(ONLY && ONLY.every((name) => name === 'import' || name === 'webhooks' || name === 'memory'))
  ) {
    log(`latency: ${settings.seqRequests} sequential requests per target, then -c ${settings.latencyConnections}, interleaved`);
    const blocks = 10;
    latency.sequential = await latencyPhase(latencyTargets, {
      connections: 1,
      perBlock: Math.ceil(settings.seqRequests / blocks),
      blocks,
      warmup: settings.latencyWarmup,
      sampleProcesses,
    });
    latency.concurrent = await latencyPhase(latencyTargets, {
      connections: settings.latencyConnections,
      perBlock: Math.ceil(settings.seqRequests / blocks / settings.latencyConnections) * 2,
      blocks,
      warmup: 200,
      sampleProcesses,
    });
    latency.hops = await measureHops({ redisPort });
    const table = [
      ...latencyTable(latency.sequential, latency.concurrent, { connections: settings.latencyConnections }),
      ...hopLines(latency.hops, LATENCY_TARGETS.seqP50),
    ].join('\n');
    process.stdout.write(`\n${table}\n`);
  }
  if (settings.seqRequests > 0 && zeroCodeTargets) {
    log(
      `zero-code latency: ${settings.seqRequests} sequential requests per target (${ZERO_CODE.join(', ')} and their direct calls), interleaved`,
    );
    zeroCodeReport.latency = await zeroCodeLatency(zeroCodeTargets, {
      perBlock: Math.ceil(settings.seqRequests / 10),
      blocks: 10,
      warmup: settings.latencyWarmup,
    });
    process.stdout.write(`\n${zeroCodeLines({ latency: zeroCodeReport.latency }).join('\n')}\n`);
  }
  if (settings.seqRequests > 0 && env.BENCH_LATENCY_ONLY) {
    closeZeroCode(zeroCodeTargets);
    fs.mkdirSync(RESULTS, { recursive: true });
    const out = { date: new Date().toISOString(), commit: gitCommit(), loadavg: os.loadavg(), latency, zeroCode: zeroCodeReport };
    fs.writeFileSync(path.join(RESULTS, `${env.BENCH_LABEL ?? 'latency'}.json`), JSON.stringify(out, null, 2) + '\n');
    return 0;
  }

  const servicePids = [...Object.entries(services), ...(stack.inbound ? [['inbound', stack.inbound]] : []), ['redis', redis]].map(
    ([name, child]) => ({ name, pid: child.pid }),
  );
  // Every process that works for a request, the load generator (this process) included: the
  // ratios compare throughput on shared cores, which follows the CPU all of them spend per request.
  const cpuPids = [
    ...servicePids,
    { name: 'psp', pid: psp.pid },
    { name: 'express', pid: expressEcho.pid },
    { name: 'fair-proxy', pid: fairProxy.pid },
  ];
  const cpuNow = () => [...cpuPids.map(({ pid }) => cpuSeconds(pid)), process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6];
  const cpuNames = [...cpuPids.map(({ name }) => name), 'loadgen'];
  // Ready and a few requests served: what a service holds before any load.
  const idleRssMb = Object.fromEntries(servicePids.map(({ name, pid }) => [name, Math.max(...descendants(pid).map(rssMb))]));
  if (targets.length > 0) log(`warm-up: ${settings.warmupS}s per target`);
  for (const t of targets) await load(t, { durationS: settings.warmupS });

  const rss = rssSampler(servicePids);
  const rounds = targets.map(() => []);
  // Each Redis command is a round trip someone waits for and a wake-up of Redis and its client.
  const commandCounter = new Redis(stack.redisServer.url);
  for (let r = 0; r < (targets.length > 0 ? settings.rounds : 0); r++) {
    for (const [i, t] of targets.entries()) {
      const before = cpuNow();
      const commandsBefore = await redisCommandCount(commandCounter);
      const result = await load(t);
      // CPU per request in each process: where the time goes, independent of machine noise.
      const after = cpuNow();
      const commandsAfter = await redisCommandCount(commandCounter);
      result.cpuUsPerRequest = Object.fromEntries(
        cpuNames.map((name, k) => [name, result.requests ? Math.round(((after[k] - before[k]) / result.requests) * 1e6) : 0]),
      );
      result.redisCommands = Object.fromEntries(
        Object.entries(commandsAfter)
          .filter(([name]) => name !== 'info')
          .map(([name, calls]) => [name, calls - (commandsBefore[name] ?? 0)])
          .filter(([, calls]) => calls > 0),
      );
      rounds[i].push(result);
    }
    log(`round ${r + 1}/${settings.rounds}: ${targets.map((t, i) => `${t.name} ${rounds[i][r].rps.toFixed(0)} rps`).join(', ')}`);
  }
  await rss.stop();
  await commandCounter.quit();

  const summary = Object.fromEntries(
    targets.map((t, i) => [
      t.name,
      {
        rps: median(rounds[i].map((x) => x.rps)),
        p50: median(rounds[i].map((x) => x.p50)),
        p99: median(rounds[i].map((x) => x.p99)),
        errors: rounds[i].reduce((a, x) => a + x.errors + x.timeouts + x.non2xx, 0),
        requests: rounds[i].reduce((a, x) => a + x.requests, 0),
        cpuUsPerRequest: Object.fromEntries(cpuNames.map((name) => [name, median(rounds[i].map((x) => x.cpuUsPerRequest[name]))])),
        redisCommandsPerRequest: perRequest(
          rounds[i].reduce((sum, x) => {
            for (const [name, calls] of Object.entries(x.redisCommands)) sum[name] = (sum[name] ?? 0) + calls;
            return sum;
          }, {}),
          rounds[i].reduce((a, x) => a + x.requests, 0),
        ),
        rounds: rounds[i],
      },
    ]),
  );
  const roundRatio = (a, b) =>
    summary[a] && summary[b] ? median(summary[a].rounds.map((x, r) => x.rps / summary[b].rounds[r].rps)) : undefined;
  const ratios = {
    tokenizeVsExpress: roundRatio('tokenize', 'express'),
    proxyVsExpress: roundRatio('proxy', 'express'),
    proxyVsPsp: roundRatio('proxy', 'psp'),
    proxyVsFairProxy: roundRatio('proxy', 'fair-proxy'),
  };

  // Latency at saturation mostly measures queueing; at half the maximum it shows the real cost.
  const fixed = {};
  if (settings.fixedRounds > 0 && targets.length > 0) {
    log(`fixed rate at half the measured maximum: ${settings.fixedRounds} x ${settings.fixedDurationS}s per target`);
    const fixedRounds = targets.map(() => []);
    for (let r = 0; r < settings.fixedRounds; r++) {
      for (const [i, t] of targets.entries()) {
        const rate = Math.max(1, Math.floor(summary[t.name].rps / 2));
        fixedRounds[i].push(await paced(t, { durationS: settings.fixedDurationS, rate }));
      }
    }
    for (const [i, t] of targets.entries()) {
      fixed[t.name] = {
        rate: fixedRounds[i][0].rate,
        rps: median(fixedRounds[i].map((x) => x.rps)),
        p50: median(fixedRounds[i].map((x) => x.p50)),
        p99: median(fixedRounds[i].map((x) => x.p99)),
        errors: fixedRounds[i].reduce((a, x) => a + x.errors + x.timeouts + x.non2xx, 0),
        rounds: fixedRounds[i],
      };
    }
  }

  // The zero-code proxies under load, each against its bare forwarder, interleaved (bench/proxies.mjs).
  if (zeroCodeTargets) {
    log(`zero-code throughput: ${settings.rounds} interleaved rounds of ${settings.durationS}s, ${settings.connections} clients`);
    const zeroCodePids = [
      ...servicePids,
      { name: 'psp', pid: psp.pid },
      { name: 'express', pid: expressEcho.pid },
      ...Object.entries(bareForwarders).map(([name, child]) => ({ name, pid: child.pid })),
    ];
    const redisClient = new Redis(stack.redisServer.url);
    zeroCodeReport.throughput = await zeroCodeThroughput(zeroCodeTargets, {
      connections: settings.connections,
      rounds: settings.rounds,
      durationS: settings.durationS,
      warmupS: settings.warmupS,
      sampleCpu: () => {
        const usage = process.cpuUsage();
        return {
          ...Object.fromEntries(zeroCodePids.map(({ name, pid }) => [name, cpuSeconds(pid)])),
          loadgen: (usage.user + usage.system) / 1e6,
        };
      },
      redisCommands: () => redisCommandCount(redisClient),
      log,
    });
    await redisClient.quit();
    closeZeroCode(zeroCodeTargets);
  }

  // Redis memory per stored card (bench/memory.mjs); BENCH_ONLY=memory runs only this phase. Before the
  // webhooks and the import, whose keys would blur its used_memory figure.
  const memory =
    !ONLY || ONLY.includes('memory')
      ? await memoryPhase({
          gatewayUrl,
          apiKey: liveKeyOf('bench-memory'),
          vaultAddr: serviceEnv.VAULT_ADDR,
          redisUrl: stack.redisServer.url,
          log,
          cards: Number(env.BENCH_MEMORY_CARDS ?? 100_000),
          cvvs: Number(env.BENCH_MEMORY_CVVS ?? 2_000),
          connections: settings.connections,
          requestLogMaxEntries: Number(env.REQUEST_LOG_MAX_ENTRIES ?? 100_000),
        })
      : undefined;

  // Webhook delivery end to end (bench/webhooks.mjs); BENCH_ONLY=webhooks runs only this phase.
  const webhooks =
    !ONLY || ONLY.includes('webhooks')
      ? await webhookPhase({
          redisUrl: stack.redisServer.url,
          receiverPort: webhookPort,
          log,
          events: Number(env.BENCH_WEBHOOK_EVENTS ?? 20_000),
          lagSeconds: Number(env.BENCH_WEBHOOK_LAG_S ?? 5),
        })
      : undefined;

  // A card import from a PGP file (bench/import.mjs); BENCH_ONLY=import runs only this phase.
  const cardImport =
    !ONLY || ONLY.includes('import')
      ? await importPhase({
          cliEnv: { ...serviceEnv, REDIS_URL: stack.redisServer.url },
          redisUrl: stack.redisServer.url,
          vaultPid: stack.vault.pid,
          log,
          cards: Number(env.BENCH_IMPORT_CARDS ?? 1_000_000),
        })
      : undefined;

  const zeroCodeErrors =
    Object.values(zeroCodeReport.latency?.sequential ?? {}).reduce((a, s) => a + s.errors, 0) +
    Object.values(zeroCodeReport.throughput?.summary ?? {}).reduce((a, s) => a + s.errors, 0);
  const totalErrors =
    Object.values(summary).reduce((a, s) => a + s.errors, 0) + Object.values(fixed).reduce((a, s) => a + s.errors, 0) + zeroCodeErrors;
  const report = {
    date: new Date().toISOString(),
    commit: gitCommit(),
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, node: process.version, loadavgAtEnd: os.loadavg() },
    settings,
    gatewayWorkers: env.GATEWAY_WORKERS ?? null,
    summary,
    ratios,
    latency,
    fixed,
    zeroCode: zeroCodeReport,
    webhooks,
    import: cardImport,
    memory,
    rssMb: rss.peak,
    idleRssMb,
    totalErrors,
    elapsedS: (Date.now() - started) / 1000,
  };

  const cpuAll = Object.fromEntries(
    targets.map((t) => [t.name, cpuNames.reduce((sum, name) => sum + (summary[t.name].cpuUsPerRequest[name] ?? 0), 0)]),
  );
  const fmt = (n, d = 0) => (n === undefined ? '-' : n.toFixed(d));
  const lines = [
    '',
    `Tessera bench — ${report.date}, commit ${report.commit}, ${report.machine.cpus} CPUs, Node ${process.version}` +
      (env.GATEWAY_WORKERS ? `, GATEWAY_WORKERS=${env.GATEWAY_WORKERS}` : ''),
    // The /v1 targets' tables, when BENCH_ONLY left any of them.
    ...(targets.length === 0
      ? ['']
      : [
          `autocannon -c ${settings.connections}, ${settings.rounds} interleaved rounds of ${settings.durationS}s, medians`,
          '',
          '| target | rps | p50 ms | p99 ms | half-load rate/s | p50 ms @half | p99 ms @half | errors |',
          '|---|---:|---:|---:|---:|---:|---:|---:|',
          ...targets.map((t) => {
            const s = summary[t.name];
            const f = fixed[t.name];
            return `| ${t.name} | ${fmt(s.rps)} | ${fmt(s.p50)} | ${fmt(s.p99)} | ${f ? f.rate : '-'} | ${f ? fmt(f.p50, 1) : '-'} | ${f ? fmt(f.p99, 1) : '-'} | ${s.errors + (f?.errors ?? 0)} |`;
          }),
          '',
          `| CPU µs per request | ${cpuNames.join(' | ')} | all |`,
          `|---|${cpuNames.map(() => '---:|').join('')}---:|`,
          ...targets.map((t) => {
            const c = summary[t.name].cpuUsPerRequest;
            const all = cpuNames.reduce((sum, name) => sum + (c[name] ?? 0), 0);
            return `| ${t.name} | ${cpuNames.map((name) => c[name]).join(' | ')} | ${all} |`;
          }),
          '',
          '| Redis commands per request | all | by command |',
          '|---|---:|---|',
          ...targets.map((t) => {
            const c = summary[t.name].redisCommandsPerRequest;
            const all = Object.values(c).reduce((a, b) => a + b, 0);
            const named = Object.entries(c)
              .filter(([, n]) => n >= 0.05)
              .map(([name, n]) => `${name} ${fmt(n, 2)}`);
            return `| ${t.name} | ${fmt(all, 2)} | ${named.join(', ')} |`;
          }),
          '',
          '| ratio (median of per-round ratios) | value | target |',
          '|---|---:|---:|',
          `| tokenize / express baseline | ${fmt(ratios.tokenizeVsExpress, 2)} | >= 0.80 |`,
          `| proxy / express baseline | ${fmt(ratios.proxyVsExpress, 2)} | >= 0.60 |`,
          `| proxy / PSP direct | ${fmt(ratios.proxyVsPsp, 2)} | (info) |`,
          `| proxy / fair Express+undici proxy | ${fmt(ratios.proxyVsFairProxy, 2)} | >= 0.50 |`,
          '',
        ]),
    '| service | idle RSS MB (largest process) | peak RSS MB (largest process) | peak RSS MB (all processes) | processes |',
    '|---|---:|---:|---:|---:|',
    ...Object.entries(rss.peak).map(
      ([name, p]) => `| ${name} | ${fmt(idleRssMb[name])} | ${fmt(p.processMaxMb)} | ${fmt(p.totalMaxMb)} | ${p.processes} |`,
    ),
    '',
    ...(latency.sequential ? latencyTable(latency.sequential, latency.concurrent, { connections: settings.latencyConnections }) : []),
    ...(latency.hops ? hopLines(latency.hops, LATENCY_TARGETS.seqP50) : []),
    ...targetLines({ cpuAll, ratios, rssPeak: rss.peak }),
    ...roundThreeLines({
      addedP50: sequentialAddedP50(latency),
      floorP50: latency.hops ? floorP50Of(latency.hops) : undefined,
      cpuAll,
      ratios,
      bytesPerCard: memory?.bytesPerCard,
    }),
    ...(zeroCodeTargets ? zeroCodeLines(zeroCodeReport) : []),
    ...(webhooks ? webhookLines(webhooks) : []),
    ...(cardImport ? importLines(cardImport) : []),
    ...(memory ? memoryLines(memory) : []),
    totalErrors === 0 ? 'Zero errors: every request answered 2xx.' : `ERRORS: ${totalErrors} requests failed or answered non-2xx.`,
    `Finished in ${fmt(report.elapsedS)}s.`,
    '',
  ];
  report.table = lines.join('\n');
  process.stdout.write(report.table);

  fs.mkdirSync(RESULTS, { recursive: true });
  fs.writeFileSync(path.join(RESULTS, 'latest.json'), JSON.stringify(report, null, 2) + '\n');
  if (env.BENCH_LABEL)
    fs.writeFileSync(path.join(RESULTS, `${env.BENCH_LABEL.replace(/[^\w.-]/g, '_')}.json`), JSON.stringify(report, null, 2) + '\n');
  return totalErrors === 0 ? 0 : 1;
}

main().then(
  (code) => stopAll(code),
  (err) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    void stopAll(1);
  },
);

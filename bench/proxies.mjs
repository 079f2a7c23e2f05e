/**
 * The zero-code proxies (issue 28), measured as /v1/proxy is:
 *   inbound      - POST a JSON checkout body with a test card to an inbound route (INBOUND_PORT) whose
 *                  upstream is the bench's Express echo: each request stores the card (vault Tokenize),
 *                  puts aliases in its place and forwards it through the proxy's ForwardUpstream;
 *   fair-inbound - the same request through a bare node:http + undici reverse proxy to the same
 *                  upstream (bench/fair-inbound.mjs);
 *   forward      - a PSP charge (JSON, a Luhn-valid alias where the card number goes) over HTTPS through
 *                  the gateway's forward proxy (FORWARD_PROXY_PORT), with a keep-alive https-proxy-agent
 *                  as a merchant's PSP SDK would use it; the PSP is the bench PSP's TLS listener;
 *   fair-forward - the same call, card number already in it, through a bare TLS-terminating CONNECT
 *                  forwarder (bench/fair-forward.mjs).
 * Added latency, one request at a time (-c 1), is each target's percentile minus that of the same call
 * made directly (the upstream echo; the PSP over HTTPS with the same client and a keep-alive agent),
 * interleaved in blocks as bench/latency.mjs does. Throughput is closed-loop load with `connections`
 * clients, each target and its bare forwarder interleaved for `rounds` rounds, the ratio the median of
 * the per-round ratios. Every client here is node:http(s) with a keep-alive agent (autocannon cannot
 * tunnel through CONNECT), so a target and its baseline always pay for the same load generator.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { percentile } from './latency.mjs';

/** The names BENCH_ONLY takes for this phase, and the pair each belongs to. */
export const ZERO_CODE_PAIRS = {
  inbound: { target: 'inbound', fair: 'fair-inbound', direct: 'inbound-direct' },
  forward: { target: 'forward', fair: 'fair-forward', direct: 'forward-direct' },
};

/** The pairs BENCH_ONLY asks for (all of them without BENCH_ONLY). */
export function zeroCodePairsOf(only) {
  return Object.entries(ZERO_CODE_PAIRS)
    .filter(([, p]) => !only || only.includes(p.target) || only.includes(p.fair))
    .map(([name]) => name);
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

function cli(root, env, script, args) {
  const res = spawnSync(process.execPath, [path.join(root, 'services/admin/dist/cli', script), ...args], {
    cwd: root,
    env,
    encoding: 'utf8',
    timeout: 15_000,
  });
  if (res.status !== 0) throw new Error(`${script} ${args[0]} failed: ${res.stderr}${res.stdout}`);
  return res.stdout;
}

/**
 * Applies the bench merchant's inbound and outbound routes with the routes CLI (as an operator does),
 * makes a card with a Luhn-valid alias and fetches the merchant's CA, and returns every target of the
 * pairs asked for, each with its own keep-alive agent of `connections` sockets.
 */
export async function prepareZeroCode({
  root,
  env,
  workDir,
  merchant,
  apiKey,
  gatewayUrl,
  inboundUrl,
  upstreamUrl,
  fairInboundUrl,
  pspTlsOrigin,
  pspCaFile,
  forwardProxyPort,
  fairForwardPort,
  connections,
  pairs,
}) {
  const card = { number: '4242424242424242', exp_month: 12, exp_year: new Date().getUTCFullYear() + 3 };
  const json = { 'content-type': 'application/json' };
  const targets = {};
  const routes = [];
  if (pairs.includes('inbound')) {
    const upstream = new URL(upstreamUrl);
    routes.push({
      id: 'bench-inbound',
      kind: 'inbound',
      mode: 'test',
      inbound: { path: '/bench-shop', upstream: upstreamUrl },
      filters: [
        { location: 'json', pointer: '/card/number', store: 'number', aliasFormat: 'card_bin_last4' },
        { location: 'json', pointer: '/card/exp_month', store: 'expiry_month' },
        { location: 'json', pointer: '/card/exp_year', store: 'expiry_year' },
        { location: 'json', pointer: '/card/cvc', store: 'cvv' },
      ],
    });
    // A checkout as a form's backend or a partner's API posts it: the card, a CVC, and order data.
    const body = JSON.stringify({ amount: 1999, currency: 'eur', order: 'bench-42', card: { ...card, cvc: '123' } });
    const agent = () => new http.Agent({ keepAlive: true, maxSockets: connections });
    targets['inbound-direct'] = { name: 'inbound-direct', url: upstream.href, headers: json, body, agent: agent() };
    targets.inbound = { name: 'inbound', url: `${inboundUrl}/bench-shop`, headers: json, body, agent: agent() };
    targets['fair-inbound'] = { name: 'fair-inbound', url: fairInboundUrl, headers: json, body, agent: agent() };
  }
  if (pairs.includes('forward')) {
    const pspHost = new URL(pspTlsOrigin).hostname;
    routes.push({
      id: 'bench-forward',
      kind: 'outbound',
      mode: 'test',
      outbound: { hosts: [pspHost] },
      filters: [{ location: 'json', pointer: '/card/number', store: 'number' }],
    });
    const tokenRes = await fetch(`${gatewayUrl}/v1/token`, {
      method: 'POST',
      headers: { ...json, 'x-api-key': apiKey },
      body: JSON.stringify({
        number: card.number,
        expiryMonth: card.exp_month,
        expiryYear: card.exp_year,
        holderName: 'Ada Lovelace',
        aliasFormats: ['card_bin_last4'],
      }),
    });
    if (tokenRes.status !== 201) throw new Error(`tokenize answered ${tokenRes.status}: ${await tokenRes.text()}`);
    const alias = (await tokenRes.json()).aliases.card_bin_last4;
    const caRes = await fetch(`${gatewayUrl}/v1/forward-proxy/ca.pem`, { headers: { 'x-api-key': apiKey } });
    if (caRes.status !== 200) throw new Error(`ca.pem answered ${caRes.status}`);
    const merchantCa = await caRes.text();
    const pspCa = fs.readFileSync(pspCaFile, 'utf8');
    const charge = (number) =>
      JSON.stringify({
        amount: 1000,
        currency: 'eur',
        card: { number, exp_month: card.exp_month, exp_year: card.exp_year, name: 'Ada Lovelace' },
      });
    const headers = { ...json, authorization: 'Bearer sk_bench' };
    const url = `${pspTlsOrigin}/v1/charges`;
    const viaProxy = (proxyUrl) => new HttpsProxyAgent(proxyUrl, { keepAlive: true, maxSockets: connections });
    // The PSP over HTTPS with the same client and a keep-alive agent: what the call costs without a proxy.
    targets['forward-direct'] = {
      name: 'forward-direct',
      url,
      headers,
      body: charge(card.number),
      agent: new https.Agent({ keepAlive: true, maxSockets: connections, ca: pspCa }),
      tls: { ca: pspCa },
    };
    // The tunnelled TLS session trusts the merchant's CA (Tessera's leaf for the PSP host), the fair
    // forwarder's the PSP's own test CA (it presents the PSP's certificate): each client trusts what
    // its proxy presents, and nothing else.
    targets.forward = {
      name: 'forward',
      url,
      headers,
      body: charge(alias),
      agent: viaProxy(`http://x:${apiKey}@127.0.0.1:${forwardProxyPort}`),
      tls: { ca: merchantCa },
    };
    targets['fair-forward'] = {
      name: 'fair-forward',
      url,
      headers,
      body: charge(card.number),
      agent: viaProxy(`http://127.0.0.1:${fairForwardPort}`),
      tls: { ca: pspCa },
    };
  }
  const routeFile = path.join(workDir, 'bench-routes.json');
  fs.writeFileSync(routeFile, JSON.stringify(routes));
  cli(root, env, 'routes.js', ['apply', '--merchant', merchant, '--file', routeFile]);
  return targets;
}

/** One request; resolves with its status and time (ms), never rejects. */
function send(t) {
  return new Promise((resolve) => {
    const start = performance.now();
    const client = t.url.startsWith('https:') ? https : http;
    const req = client.request(
      t.url,
      { method: 'POST', headers: { ...t.headers, 'content-length': Buffer.byteLength(t.body) }, agent: t.agent, ...t.tls },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - start }));
        res.on('error', () => resolve({ status: 0, ms: performance.now() - start }));
      },
    );
    req.on('error', () => resolve({ status: 0, ms: performance.now() - start }));
    req.end(t.body);
  });
}

/** `connections` clients, each sending its next request when the last has answered, `count` each or until `until`. */
async function closedLoop(t, { connections, count = Infinity, until = Infinity }) {
  const latencies = [];
  let errors = 0;
  const client = async () => {
    for (let i = 0; i < count && performance.now() < until; i++) {
      const { status, ms } = await send(t);
      if (status >= 200 && status < 300) latencies.push(ms);
      else errors++;
    }
  };
  await Promise.all(Array.from({ length: connections }, client));
  return { latencies, errors };
}

function summarize(latencies, errors) {
  const sorted = Float64Array.from(latencies).sort();
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: percentile(sorted, 100),
    errors,
  };
}

/** Every target must answer 2xx once before it is measured: a fast stream of errors is not a latency. */
export async function checkZeroCode(targets) {
  for (const t of Object.values(targets)) {
    const { status } = await send(t);
    if (status < 200 || status >= 300) throw new Error(`${t.name} answered ${status || 'with a network error'}`);
  }
}

/**
 * One request at a time: each pair's direct call, the Tessera target and its bare forwarder, `blocks`
 * interleaved blocks of `perBlock` requests, after `warmup` requests each from 10 clients.
 */
export async function zeroCodeLatency(targets, { perBlock, blocks, warmup }) {
  const list = Object.values(targets);
  for (const t of list) await closedLoop(t, { connections: 10, count: Math.ceil(warmup / 10) });
  const acc = Object.fromEntries(list.map((t) => [t.name, { latencies: [], errors: 0 }]));
  for (let b = 0; b < blocks; b++) {
    for (const t of list) {
      const r = await closedLoop(t, { connections: 1, count: perBlock });
      acc[t.name].latencies.push(...r.latencies);
      acc[t.name].errors += r.errors;
    }
  }
  const sequential = Object.fromEntries(list.map((t) => [t.name, summarize(acc[t.name].latencies, acc[t.name].errors)]));
  const added = {};
  for (const pair of Object.values(ZERO_CODE_PAIRS)) {
    const direct = sequential[pair.direct];
    if (!direct) continue;
    for (const name of [pair.target, pair.fair]) {
      added[name] = { p50: sequential[name].p50 - direct.p50, p99: sequential[name].p99 - direct.p99 };
    }
  }
  return { sequential, added };
}

/**
 * Saturating closed-loop load: every pair's target and bare forwarder interleaved, `rounds` rounds of
 * `durationS` each after `warmupS`; CPU per request of each process from `sampleCpu()` (seconds by name).
 */
export async function zeroCodeThroughput(targets, { connections, rounds, durationS, warmupS, sampleCpu, redisCommands, log }) {
  const pairs = Object.values(ZERO_CODE_PAIRS).filter((p) => targets[p.target]);
  const list = pairs.flatMap((p) => [targets[p.target], targets[p.fair]]);
  for (const t of list) await closedLoop(t, { connections, until: performance.now() + warmupS * 1000 });
  const byTarget = Object.fromEntries(list.map((t) => [t.name, []]));
  for (let r = 0; r < rounds; r++) {
    for (const t of list) {
      const commandsBefore = await redisCommands();
      const before = sampleCpu();
      const start = performance.now();
      const { latencies, errors } = await closedLoop(t, { connections, until: start + durationS * 1000 });
      const elapsedS = (performance.now() - start) / 1000;
      const after = sampleCpu();
      const requests = latencies.length + errors;
      const commandsAfter = await redisCommands();
      // Per request, by command: which round trips and scripts the target costs Redis (one INFO of the two is counted).
      const commands = Object.fromEntries(
        Object.entries(commandsAfter)
          .map(([name, calls]) => [name, (calls - (commandsBefore[name] ?? 0) - (name === 'info' ? 1 : 0)) / Math.max(1, requests)])
          .filter(([, perRequest]) => perRequest > 0),
      );
      const sorted = Float64Array.from(latencies).sort();
      byTarget[t.name].push({
        rps: latencies.length / elapsedS,
        p50: percentile(sorted, 50),
        p99: percentile(sorted, 99),
        requests,
        errors,
        redisCommandsPerRequest: Object.values(commands).reduce((a, b) => a + b, 0),
        redisCommandsByName: commands,
        cpuUsPerRequest: Object.fromEntries(
          Object.keys(after).map((name) => [name, requests ? Math.round(((after[name] - before[name]) / requests) * 1e6) : 0]),
        ),
      });
    }
    log(`zero-code round ${r + 1}/${rounds}: ${list.map((t) => `${t.name} ${byTarget[t.name][r].rps.toFixed(0)} rps`).join(', ')}`);
  }
  const summary = Object.fromEntries(
    list.map((t) => {
      const rs = byTarget[t.name];
      const names = Object.keys(rs[0]?.cpuUsPerRequest ?? {});
      return [
        t.name,
        {
          rps: median(rs.map((x) => x.rps)),
          p50: median(rs.map((x) => x.p50)),
          p99: median(rs.map((x) => x.p99)),
          errors: rs.reduce((a, x) => a + x.errors, 0),
          requests: rs.reduce((a, x) => a + x.requests, 0),
          redisCommandsPerRequest: median(rs.map((x) => x.redisCommandsPerRequest)),
          cpuUsPerRequest: Object.fromEntries(names.map((name) => [name, median(rs.map((x) => x.cpuUsPerRequest[name]))])),
          rounds: rs,
        },
      ];
    }),
  );
  const ratios = Object.fromEntries(
    pairs.map((p) => [p.target, median(byTarget[p.target].map((x, r) => x.rps / byTarget[p.fair][r].rps))]),
  );
  return { summary, ratios };
}

/** The commands Redis has run since it started, by name (INFO commandstats), over `redis` (an ioredis client). */
export async function redisCommandCount(redis) {
  const stats = await redisCommandStats(redis);
  return Object.fromEntries(Object.entries(stats).map(([command, { calls }]) => [command, calls]));
}

/** The same, with the microseconds Redis spent in each command: { command: { calls, usec } }. */
export async function redisCommandStats(redis) {
  const stats = {};
  for (const match of (await redis.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm))
    stats[match[1]] = { calls: Number(match[2]), usec: Number(match[3]) };
  return stats;
}

/** Closes every keep-alive socket the targets' agents hold. */
export function closeZeroCode(targets) {
  for (const t of Object.values(targets ?? {})) t.agent.destroy();
}

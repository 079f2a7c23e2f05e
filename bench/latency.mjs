/**
 * Latency Tessera adds to a PSP call: the same PSP called directly, through POST /v1/proxy, and
 * POST /v1/token for the same hops minus the PSP, first one request at a time (-c 1), then with
 * `connections` closed-loop clients (-c 10, below saturation). Targets are interleaved in blocks
 * so that every target sees the same machine noise, and the added latency is the difference of
 * the percentiles (p50 of /v1/proxy minus p50 of the PSP direct, and so on).
 *
 * Each request's own timing headers are kept too (x-tessera-total-ms: the gateway's time;
 * x-tessera-psp-ms: the proxy's PSP exchange), so the report can say on which side of the
 * gateway the time went.
 */
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';

/** The targets for the latency Tessera adds (ms). */
export const LATENCY_TARGETS = { seqP50: 1.0, seqP99: 3.0, concP99: 5.0 };

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function summarize(samples) {
  const sorted = Float64Array.from(samples).sort();
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: percentile(sorted, 100),
  };
}

/**
 * `count` requests on each of `connections` keep-alive connections, each client sending its next
 * request when the previous one has answered. Returns the latencies (ms) and the timing headers.
 */
async function closedLoop(target, { connections, count }) {
  const url = new URL(target.url);
  const pool = new Pool(url.origin, { connections, pipelining: 1 });
  const latencies = [];
  const totalMs = [];
  const pspMs = [];
  let errors = 0;
  const client = async () => {
    for (let i = 0; i < count; i++) {
      const start = performance.now();
      try {
        const res = await pool.request({ path: url.pathname, method: 'POST', headers: target.headers, body: target.body });
        await res.body.dump();
        const elapsed = performance.now() - start;
        if (res.statusCode >= 300) {
          errors++;
          continue;
        }
        latencies.push(elapsed);
        const total = res.headers['x-tessera-total-ms'];
        if (total !== undefined) totalMs.push(Number(total));
        const psp = res.headers['x-tessera-psp-ms'];
        if (psp !== undefined) pspMs.push(Number(psp));
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, client));
  await pool.close();
  return { latencies, totalMs, pspMs, errors };
}

/**
 * Runs `targets` (objects with name, url, headers, body) in `blocks` interleaved blocks of
 * `perBlock` requests per connection each, after `warmup` requests in all; returns
 * per-target percentiles over all blocks.
 */
export async function latencyPhase(targets, { connections, perBlock, blocks, warmup, sampleProcesses }) {
  // Warmed up with several clients at once, which is quicker than one: what matters is that V8 has
  // optimised the request path, as in a service that has been up for a while. 50 requests were
  // not enough: the first 1000 sequential calls then cost ~1.5x the CPU of the next 1000.
  const warmupConnections = Math.max(connections, 10);
  for (const t of targets) await closedLoop(t, { connections: warmupConnections, count: Math.ceil(warmup / warmupConnections) });
  const acc = Object.fromEntries(targets.map((t) => [t.name, { latencies: [], totalMs: [], pspMs: [], errors: 0, used: {} }]));
  for (let b = 0; b < blocks; b++) {
    for (const t of targets) {
      const before = sampleProcesses?.();
      const r = await closedLoop(t, { connections, count: perBlock });
      const a = acc[t.name];
      if (before) addDifference(a.used, before, sampleProcesses());
      a.latencies.push(...r.latencies);
      a.totalMs.push(...r.totalMs);
      a.pspMs.push(...r.pspMs);
      a.errors += r.errors;
    }
  }
  return Object.fromEntries(
    targets.map((t) => {
      const a = acc[t.name];
      return [
        t.name,
        {
          ...summarize(a.latencies),
          errors: a.errors,
          ...(a.totalMs.length ? { gatewayTotalMs: summarize(a.totalMs) } : {}),
          ...(a.pspMs.length ? { pspExchangeMs: summarize(a.pspMs) } : {}),
          ...(sampleProcesses ? { perRequest: perRequest(a.used, a.latencies.length + a.errors) } : {}),
        },
      ];
    }),
  );
}

/** into[metric][process] += after - before, for samples shaped { metric: { process: number } }. */
function addDifference(into, before, after) {
  for (const [metric, byProcess] of Object.entries(after)) {
    into[metric] ??= {};
    for (const [name, value] of Object.entries(byProcess)) into[metric][name] = (into[metric][name] ?? 0) + value - before[metric][name];
  }
}

function perRequest(used, requests) {
  return Object.fromEntries(
    Object.entries(used).map(([metric, byProcess]) => [
      metric,
      Object.fromEntries(Object.entries(byProcess).map(([name, total]) => [name, total / requests])),
    ]),
  );
}

/** Added latency: each Tessera target's percentiles minus the PSP's (proxy) or nothing (token). */
export function addedLatency(phase, base = 'psp') {
  const b = phase[base];
  const out = {};
  for (const [name, s] of Object.entries(phase)) {
    if (name === base || !b) continue;
    out[name] = { p50: s.p50 - b.p50, p99: s.p99 - b.p99 };
  }
  return out;
}

const f = (n, d = 2) => (n === undefined || Number.isNaN(n) ? '-' : n.toFixed(d));
const mark = (value, target) => (value <= target ? 'ok' : `MISSED by ${f(value - target)}`);

/**
 * What each process spends per request while the latency is measured: CPU, and the times a thread
 * of it blocked and was woken again (voluntary context switches), which one request at a time
 * cost more than the work they wake up for (docs/PERFORMANCE.md, round two).
 */
const PROCESS_METRICS = [
  ['CPU µs', 0],
  ['wake-ups', 1],
];

/** The latency tables as markdown lines, targets beside the figures. */
export function latencyTable(seq, conc, { connections }) {
  const lines = [];
  const phases = [
    ['-c 1 (sequential)', seq],
    [`-c ${connections}`, conc],
  ];
  for (const [label, phase] of phases) {
    if (!phase) continue;
    lines.push(
      `| ${label} | n | p50 ms | p90 ms | p99 ms | max ms | gateway total p50/p99 | PSP exchange p50/p99 | errors |`,
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const [name, s] of Object.entries(phase)) {
      const g = s.gatewayTotalMs ? `${f(s.gatewayTotalMs.p50, 1)} / ${f(s.gatewayTotalMs.p99, 1)}` : '-';
      const p = s.pspExchangeMs ? `${f(s.pspExchangeMs.p50, 1)} / ${f(s.pspExchangeMs.p99, 1)}` : '-';
      lines.push(`| ${name} | ${s.n} | ${f(s.p50)} | ${f(s.p90)} | ${f(s.p99)} | ${f(s.max)} | ${g} | ${p} | ${s.errors} |`);
    }
    lines.push('');
    for (const [metric, digits] of PROCESS_METRICS) {
      const names = Object.keys(Object.values(phase)[0]?.perRequest?.[metric] ?? {});
      if (names.length === 0) continue;
      lines.push(`| ${label}: ${metric} per request | ${names.join(' | ')} | all |`, `|---|${names.map(() => '---:|').join('')}---:|`);
      for (const [name, s] of Object.entries(phase)) {
        const values = names.map((n) => s.perRequest[metric][n]);
        lines.push(
          `| ${name} | ${values.map((v) => f(v, digits)).join(' | ')} | ${f(
            values.reduce((x, y) => x + y, 0),
            digits,
          )} |`,
        );
      }
      lines.push('');
    }
  }
  lines.push('| added latency over the PSP direct (ms) | value | target |', '|---|---:|---|');
  if (seq?.proxy && seq?.psp) {
    const a = addedLatency(seq).proxy;
    lines.push(`| /v1/proxy, -c 1, p50 | ${f(a.p50)} | <= ${LATENCY_TARGETS.seqP50} ${mark(a.p50, LATENCY_TARGETS.seqP50)} |`);
    lines.push(`| /v1/proxy, -c 1, p99 | ${f(a.p99)} | <= ${LATENCY_TARGETS.seqP99} ${mark(a.p99, LATENCY_TARGETS.seqP99)} |`);
  }
  if (conc?.proxy && conc?.psp) {
    const a = addedLatency(conc).proxy;
    lines.push(`| /v1/proxy, -c ${connections}, p50 | ${f(a.p50)} | (info) |`);
    lines.push(
      `| /v1/proxy, -c ${connections}, p99 | ${f(a.p99)} | <= ${LATENCY_TARGETS.concP99} ${mark(a.p99, LATENCY_TARGETS.concP99)} |`,
    );
  }
  if (seq?.tokenize)
    lines.push(`| /v1/token, -c 1, p50 / p99 (whole request, no PSP) | ${f(seq.tokenize.p50)} / ${f(seq.tokenize.p99)} | (info) |`);
  lines.push('');
  return lines;
}

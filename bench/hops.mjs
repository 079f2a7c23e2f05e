/**
 * The floor under the latency Tessera adds: one hop of each kind that /v1/proxy adds to a PSP
 * call, with no work behind it, timed one request at a time on this machine. /v1/proxy adds two
 * gRPC hops (gateway -> proxy -> vault) and two Redis round trips (the gateway's key lookup, the
 * vault's card read) to the HTTP exchange the PSP direct already has; the sum of their p50s is
 * what the added p50 cannot go below with this architecture, whatever the services do.
 *
 * One request at a time, what a call costs on this machine is mostly the times it wakes a process
 * (docs/PERFORMANCE.md). So the gRPC hop is also measured in the ways of carrying a call that
 * could wake the processes less often (issue 30), interleaved in blocks so all see the same noise,
 * each with the wake-ups (voluntary context switches of all threads) and CPU of both processes:
 *   unary            the plain grpc-js call, answered when the status trailers have arrived;
 *   unary, early     as the services call (callUnary of @tessera/protos): answered on the message;
 *   unary, eager status  the server sends the status without waiting for the message's write;
 *   stream           one long-lived bidi stream, each message carrying the id of its call.
 *
 * `node bench/hops.mjs server` is the echo server, `node bench/hops.mjs client <port> <server pid>`
 * the client (a process of its own, so that its counts are the call's alone).
 */
import { fork } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { percentile } from './latency.mjs';

const require = createRequire(import.meta.url);
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const { Redis } = require('ioredis');

const SELF = fileURLToPath(import.meta.url);
const ECHO_PROTO = fileURLToPath(new URL('./hop-echo.proto', import.meta.url));
const echoService = () => grpc.loadPackageDefinition(protoLoader.loadSync(ECHO_PROTO, { longs: Number })).benchhop.Echo;

const BLOCKS = 10;

function summarize(samples) {
  const sorted = Float64Array.from(samples).sort();
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

async function timeSequential(call, { warmup, count }) {
  for (let i = 0; i < warmup; i++) await call();
  const samples = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    await call();
    samples.push(performance.now() - start);
  }
  return summarize(samples);
}

/** CPU ns (schedstat, all threads) and voluntary context switches of a process. */
function processUse(pid) {
  let cpuNs = 0;
  let wakeups = 0;
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      cpuNs += Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      const match = /voluntary_ctxt_switches:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8'));
      if (match) wakeups += Number(match[1]);
    }
  } catch {
    // a thread ended meanwhile
  }
  return { cpuNs, wakeups };
}

/** The ways of carrying one echo call, each a function returning a promise of the reply. */
async function callVariants(port) {
  const { callUnary } = require('@tessera/protos');
  const Echo = echoService();
  const client = new Echo(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const payload = { text: 'x'.repeat(200) };
  const stream = client.Chat();
  const waiting = new Map();
  stream.on('data', (reply) => {
    waiting.get(reply.id)?.(reply);
    waiting.delete(reply.id);
  });
  stream.on('error', () => undefined);
  let nextId = 1;
  const variants = {
    unary: () => new Promise((resolve, reject) => client.Say(payload, (err, reply) => (err ? reject(err) : resolve(reply)))),
    'unary, early answer': () => callUnary(client, client.Say, payload, { timeoutMs: 5000 }),
    'unary, early answer, eager status': () => callUnary(client, client.SayEagerStatus, payload, { timeoutMs: 5000 }),
    stream: () =>
      new Promise((resolve) => {
        const id = nextId++;
        waiting.set(id, resolve);
        stream.write({ ...payload, id });
      }),
  };
  return { variants, close: () => (stream.end(), client.close()) };
}

async function runClient(port, serverPid, warmup, count) {
  const { variants, close } = await callVariants(port);
  const acc = Object.fromEntries(
    Object.keys(variants).map((name) => [name, { samples: [], client: { cpuNs: 0, wakeups: 0 }, server: { cpuNs: 0, wakeups: 0 } }]),
  );
  for (const call of Object.values(variants)) for (let i = 0; i < warmup; i++) await call();
  const perBlock = Math.ceil(count / BLOCKS);
  for (let b = 0; b < BLOCKS; b++) {
    for (const [name, call] of Object.entries(variants)) {
      const a = acc[name];
      const before = { client: processUse(process.pid), server: processUse(serverPid) };
      for (let i = 0; i < perBlock; i++) {
        const start = performance.now();
        await call();
        a.samples.push(performance.now() - start);
      }
      const after = { client: processUse(process.pid), server: processUse(serverPid) };
      for (const side of ['client', 'server']) for (const k of ['cpuNs', 'wakeups']) a[side][k] += after[side][k] - before[side][k];
    }
  }
  close();
  return Object.fromEntries(
    Object.entries(acc).map(([name, a]) => {
      const n = a.samples.length;
      return [
        name,
        {
          ...summarize(a.samples),
          wakeups: { client: a.client.wakeups / n, server: a.server.wakeups / n },
          cpuUs: { client: a.client.cpuNs / n / 1000, server: a.server.cpuNs / n / 1000 },
        },
      ];
    }),
  );
}

/** A child process of this file, and the first message it sends. */
function start(args) {
  const child = fork(SELF, args, { stdio: 'ignore' });
  child.on('error', () => undefined);
  const first = new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', () => reject(new Error(`bench/hops.mjs ${args[0]} exited`)));
  });
  return { child, first };
}

/**
 * { grpc, grpcVariants, redis }: p50/p99 ms of a unary gRPC echo (message and trailers), of each
 * way of carrying it (with wake-ups and CPU µs per call, client and server), and of a Redis GET.
 */
export async function measureHops({ redisPort, warmup = 2000, count = 2000 }) {
  const server = start(['server']);
  try {
    const port = await server.first;
    const client = start(['client', String(port), String(server.child.pid), String(warmup), String(count)]);
    const grpcVariants = await client.first;
    const redis = new Redis({ port: redisPort, host: '127.0.0.1', lazyConnect: true });
    await redis.connect();
    const redisHop = await timeSequential(() => redis.get('bench:hop'), { warmup, count });
    redis.disconnect();
    const { p50, p99 } = grpcVariants.unary;
    return { grpc: { p50, p99 }, grpcVariants, redis: redisHop };
  } finally {
    server.child.kill();
  }
}

const f = (n, d = 2) => (n === undefined || Number.isNaN(n) ? '-' : n.toFixed(d));

/** The added p50 /v1/proxy cannot go below: its two gRPC hops and two Redis round trips. */
export function floorP50Of(hops) {
  return 2 * hops.grpc.p50 + 2 * hops.redis.p50;
}

/** The hops tables, and the floor they put under /v1/proxy's added p50 beside its target. */
export function hopLines(hops, targetP50) {
  const floor = floorP50Of(hops);
  const lines = [
    '| one hop, one request at a time, no work behind it | p50 ms | p99 ms |',
    '|---|---:|---:|',
    `| gRPC unary echo (grpc-js both sides) | ${f(hops.grpc.p50)} | ${f(hops.grpc.p99)} |`,
    `| Redis GET (ioredis) | ${f(hops.redis.p50)} | ${f(hops.redis.p99)} |`,
    `| floor under /v1/proxy's added p50: 2 gRPC hops + 2 Redis round trips (target ${targetP50}) | ${f(floor)} | |`,
    '',
  ];
  if (hops.grpcVariants) {
    lines.push(
      '| gRPC echo, one call at a time, carried as | p50 ms | p99 ms | wake-ups client / server / both | CPU µs client / server / both |',
      '|---|---:|---:|---:|---:|',
    );
    for (const [name, v] of Object.entries(hops.grpcVariants)) {
      const w = v.wakeups;
      const c = v.cpuUs;
      lines.push(
        `| ${name} | ${f(v.p50)} | ${f(v.p99)} | ${f(w.client)} / ${f(w.server)} / ${f(w.client + w.server)} | ${f(c.client, 0)} / ${f(c.server, 0)} / ${f(c.client + c.server, 0)} |`,
      );
    }
    lines.push('');
  }
  return lines;
}

/** Sends the status as soon as the message is handed to HTTP/2, not when its write has completed. */
class EagerStatusCall extends grpc.ServerInterceptingCall {
  sendMessage(message, callback) {
    super.sendMessage(message, () => undefined);
    callback();
  }
}

if (process.argv[2] === 'server') {
  const server = new grpc.Server({
    interceptors: [
      (method, call) => (method.path.endsWith('/SayEagerStatus') ? new EagerStatusCall(call) : new grpc.ServerInterceptingCall(call)),
    ],
  });
  const echo = (call, callback) => callback(null, { text: call.request.text });
  server.addService(echoService().service, {
    Say: echo,
    SayEagerStatus: echo,
    Chat: (call) => {
      call.on('data', (message) => call.write(message));
      call.on('end', () => call.end());
      call.on('error', () => undefined);
    },
  });
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) process.exit(1);
    process.send(port);
  });
  process.on('disconnect', () => process.exit(0));
} else if (process.argv[2] === 'client') {
  const [port, serverPid, warmup, count] = process.argv.slice(3).map(Number);
  runClient(port, serverPid, warmup, count).then(
    (result) => process.send(result, () => process.exit(0)),
    () => process.exit(1),
  );
}

/**
 * The floor under the latency Tessera adds: one hop of each kind that /v1/proxy adds to a PSP
 * call, with no work behind it, timed one request at a time on this machine. /v1/proxy adds two
 * gRPC hops (gateway -> proxy -> vault) and two Redis round trips (the gateway's key lookup, the
 * vault's card read) to the HTTP exchange the PSP direct already has; the sum of their p50s is
 * what the added p50 cannot go below with this architecture, whatever the services do.
 *
 * Run as `node bench/hops.mjs server` it is the gRPC echo server (grpc-js, as the services use).
 */
import { fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { percentile } from './latency.mjs';

const require = createRequire(import.meta.url);
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const { Redis } = require('ioredis');

const ECHO_PROTO = fileURLToPath(new URL('./hop-echo.proto', import.meta.url));
const echoService = () => grpc.loadPackageDefinition(protoLoader.loadSync(ECHO_PROTO)).benchhop.Echo;

async function timeSequential(call, { warmup, count }) {
  for (let i = 0; i < warmup; i++) await call();
  const samples = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    await call();
    samples.push(performance.now() - start);
  }
  const sorted = Float64Array.from(samples).sort();
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

/** { grpc, redis }: p50/p99 ms of a unary gRPC echo (message and trailers) and of a Redis GET through ioredis. */
export async function measureHops({ redisPort, warmup = 2000, count = 2000 }) {
  const server = fork(fileURLToPath(import.meta.url), ['server'], { stdio: 'ignore' });
  server.on('error', () => undefined);
  try {
    const port = await new Promise((resolve, reject) => {
      server.once('message', resolve);
      server.once('exit', () => reject(new Error('the gRPC echo server exited')));
    });
    const Echo = echoService();
    const client = new Echo(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    const payload = { text: 'x'.repeat(200) };
    const grpcHop = await timeSequential(
      () => new Promise((resolve, reject) => client.Say(payload, (err, reply) => (err ? reject(err) : resolve(reply)))),
      { warmup, count },
    );
    client.close();
    const redis = new Redis({ port: redisPort, host: '127.0.0.1', lazyConnect: true });
    await redis.connect();
    const redisHop = await timeSequential(() => redis.get('bench:hop'), { warmup, count });
    redis.disconnect();
    return { grpc: grpcHop, redis: redisHop };
  } finally {
    server.kill();
  }
}

/** The hops table, and the floor they put under /v1/proxy's added p50 beside its target. */
/** The added p50 /v1/proxy cannot go below: its two gRPC hops and two Redis round trips. */
export function floorP50Of(hops) {
  return 2 * hops.grpc.p50 + 2 * hops.redis.p50;
}

export function hopLines(hops, targetP50) {
  const floor = floorP50Of(hops);
  return [
    '| one hop, one request at a time, no work behind it | p50 ms | p99 ms |',
    '|---|---:|---:|',
    `| gRPC unary echo (grpc-js both sides) | ${hops.grpc.p50.toFixed(2)} | ${hops.grpc.p99.toFixed(2)} |`,
    `| Redis GET (ioredis) | ${hops.redis.p50.toFixed(2)} | ${hops.redis.p99.toFixed(2)} |`,
    `| floor under /v1/proxy's added p50: 2 gRPC hops + 2 Redis round trips (target ${targetP50}) | ${floor.toFixed(2)} | |`,
    '',
  ];
}

if (process.argv[2] === 'server') {
  const server = new grpc.Server();
  server.addService(echoService().service, { Say: (call, callback) => callback(null, { text: call.request.text }) });
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) process.exit(1);
    process.send(port);
  });
  process.on('disconnect', () => process.exit(0));
}

import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { experimental } from '@grpc/grpc-js';
import { checkHealth, createHealthClient, createHealthService, healthService, type HealthClient, type HealthService } from './health';
import { balancedChannelOptions, livenessChannelOptions } from './loadBalancing';
import { serverOptions } from './index';

jest.setTimeout(30_000);

const SERVICE = 'tessera.test.v1.Thing';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One replica: grpc.health.v1 whose Watch follows `ready`, and whose Check calls are counted as "the service's calls". */
interface Replica {
  server: grpc.Server;
  port: number;
  health: HealthService;
  ready: boolean;
  /** Answers nothing at all, as a frozen process (SIGSTOP) would: its connection stays open. */
  hung: boolean;
  calls: number;
}

async function startReplica(
  options: { watch?: boolean; server?: grpc.ServerOptions; port?: number; readyDelayMs?: number } = {},
): Promise<Replica> {
  const replica = { ready: true, hung: false, calls: 0 } as Replica;
  const isReady = async () => {
    if (options.readyDelayMs !== undefined) await sleep(options.readyDelayMs);
    return replica.ready;
  };
  replica.health = createHealthService([SERVICE], isReady, { pollIntervalMs: 100, checkTimeoutMs: 200 });
  replica.server = new grpc.Server(options.server);
  const handlers = {
    ...replica.health.handlers,
    Check: (call: Parameters<HealthService['handlers']['Check']>[0], callback: grpc.sendUnaryData<{ status: string }>) => {
      if (replica.hung) return;
      // The balancer's own liveness Checks ask for the server as a whole ('').
      if (call.request.service === SERVICE) replica.calls++;
      callback(null, { status: 'SERVING' });
    },
  };
  // Without Watch: an older server, which grpc-js answers UNIMPLEMENTED.
  if (options.watch === false) delete (handlers as Partial<typeof handlers>).Watch;
  replica.server.addService(healthService, handlers as grpc.UntypedServiceImplementation);
  replica.port = await new Promise<number>((resolve, reject) =>
    replica.server.bindAsync(`127.0.0.1:${options.port ?? 0}`, grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return replica;
}

const replicas: Replica[] = [];
const clients: HealthClient[] = [];

afterEach(() => {
  for (const c of clients.splice(0)) c.close();
  for (const r of replicas.splice(0)) {
    r.health.shutdown();
    r.server.forceShutdown();
  }
});

async function twoReplicas(options: { watch?: boolean; server?: grpc.ServerOptions } = {}): Promise<[Replica, Replica, HealthClient]> {
  const a = await startReplica(options);
  const b = await startReplica(options);
  replicas.push(a, b);
  return [a, b, balancedClient([a.port, b.port])];
}

/** A round-robin client over the given local ports, reconnecting quickly (closed after each test). */
function balancedClient(ports: number[], maxReconnectBackoffMs = 500, options: grpc.ChannelOptions = {}): HealthClient {
  const client = createHealthClient(`ipv4:${ports.map((p) => `127.0.0.1:${p}`).join(',')}`, grpc.credentials.createInsecure(), {
    ...balancedChannelOptions(SERVICE),
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': maxReconnectBackoffMs,
    ...options,
  });
  clients.push(client);
  return client;
}

/** `n` calls one after another (each a separate pick), after both connections are up. */
async function send(client: HealthClient, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await checkHealth(client, SERVICE, 2000);
}

async function bothConnected(client: HealthClient, a: Replica, b: Replica): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (a.calls === 0 || b.calls === 0) {
    if (Date.now() > deadline) throw new Error('never reached both replicas');
    await send(client, 1);
    await sleep(20);
  }
}

/**
 * Rounds of 10 calls until one round meets `done`, failing if that takes longer than `withinMs`:
 * the bound on how soon the balancer acts on what it heard, without waiting all of it out.
 */
async function within(withinMs: number, what: string, client: HealthClient, a: Replica, b: Replica, done: () => boolean): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    [a.calls, b.calls] = [0, 0];
    await send(client, 10);
    if (done()) return;
    if (Date.now() > deadline) throw new Error(`not within ${withinMs} ms: ${what}`);
    await sleep(50);
  }
}

describe('health-checked round_robin (balancedChannelOptions)', () => {
  it('spreads calls over every address of a static ipv4: list', async () => {
    const [a, b, client] = await twoReplicas();
    await bothConnected(client, a, b);
    [a.calls, b.calls] = [0, 0];
    await send(client, 100);
    expect(a.calls + b.calls).toBe(100);
    expect(a.calls).toBeGreaterThanOrEqual(40);
    expect(b.calls).toBeGreaterThanOrEqual(40);
  });

  it('takes a replica that reports NOT_SERVING out of rotation, and back when it serves again', async () => {
    const [a, b, client] = await twoReplicas();
    await bothConnected(client, a, b);
    b.ready = false;
    // Polled every 100 ms, with a 200 ms timeout: well under a second to hear of it.
    await within(1000, 'B out of rotation', client, a, b, () => b.calls === 0);
    [a.calls, b.calls] = [0, 0];
    await send(client, 40);
    expect(b.calls).toBe(0);
    expect(a.calls).toBe(40);
    b.ready = true;
    await within(1000, 'B back in rotation', client, a, b, () => b.calls > 0);
    [a.calls, b.calls] = [0, 0];
    await send(client, 40);
    expect(b.calls).toBeGreaterThanOrEqual(10);
    expect(a.calls).toBeGreaterThanOrEqual(10);
  });

  it('sends nothing to a replica that joins NOT_SERVING, not even before its first health answer', async () => {
    const a = await startReplica();
    replicas.push(a);
    const portOfB = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const client = balancedClient([a.port, portOfB], 200);
    await send(client, 2);
    // B comes up later, and its readiness check takes 150 ms to say no.
    const b = await startReplica({ port: portOfB, readyDelayMs: 150 });
    b.ready = false;
    replicas.push(b);
    const until = Date.now() + 1500;
    while (Date.now() < until) await send(client, 1);
    expect(b.calls).toBe(0);
  });

  it('still sends calls when no replica is serving, so callers get the replicas’ own errors', async () => {
    const [a, b, client] = await twoReplicas();
    await bothConnected(client, a, b);
    a.ready = false;
    b.ready = false;
    await sleep(1000);
    [a.calls, b.calls] = [0, 0];
    await send(client, 20);
    expect(a.calls + b.calls).toBe(20);
  });

  it('moves calls away from a replica whose health service shuts down, before its server stops', async () => {
    const [a, b, client] = await twoReplicas();
    await bothConnected(client, a, b);
    b.health.shutdown();
    await within(500, 'B out of rotation', client, a, b, () => b.calls === 0);
    [a.calls, b.calls] = [0, 0];
    await send(client, 20);
    expect(b.calls).toBe(0);
  });

  it('balances over servers without Watch (an older version mid-upgrade) as if they were serving', async () => {
    const [a, b, client] = await twoReplicas({ watch: false });
    await bothConnected(client, a, b);
    [a.calls, b.calls] = [0, 0];
    await send(client, 40);
    expect(a.calls).toBeGreaterThanOrEqual(10);
    expect(b.calls).toBeGreaterThanOrEqual(10);
  });

  it('keeps every call working while a server closes connections at its maximum age and the client reconnects', async () => {
    // One replica ages out every ~300 ms. (Two closing at the same instant can both refuse a
    // call's one transparent retry; grpc-js's ±10 % jitter on minutes keeps that rare, see docs/scaling.md.)
    const a = await startReplica({
      server: serverOptions({ minPingIntervalMs: 10_000, maxConnectionAgeMs: 300, maxConnectionAgeGraceMs: 1000 }),
    });
    const b = await startReplica();
    replicas.push(a, b);
    const client = balancedClient([a.port, b.port]);
    await bothConnected(client, a, b);
    [a.calls, b.calls] = [0, 0];
    const until = Date.now() + 2000;
    let sent = 0;
    // Several connection lifetimes: each call must succeed (checkHealth rejects otherwise).
    while (Date.now() < until) {
      await send(client, 1);
      sent++;
    }
    expect(a.calls + b.calls).toBe(sent);
    expect(a.calls).toBeGreaterThan(sent / 4);
    expect(b.calls).toBeGreaterThan(sent / 4);
  });

  describe('with liveness probing', () => {
    // Asked every 100 ms, hung after 200 ms without an answer: noticed within 300 ms.
    const probing = livenessChannelOptions({ livenessIntervalMs: 100, livenessTimeoutMs: 200 });
    const noticed = () => sleep(800);

    it('takes a replica that stops answering out of rotation, and back once it answers again', async () => {
      const a = await startReplica();
      const b = await startReplica();
      replicas.push(a, b);
      const client = balancedClient([a.port, b.port], 500, probing);
      await bothConnected(client, a, b);
      b.hung = true;
      await noticed();
      [a.calls, b.calls] = [0, 0];
      // A call sent to B would never be answered, and checkHealth would reject at its deadline.
      await send(client, 20);
      expect([a.calls, b.calls]).toEqual([20, 0]);
      b.hung = false;
      await noticed();
      [a.calls, b.calls] = [0, 0];
      await send(client, 40);
      expect(a.calls).toBeGreaterThanOrEqual(10);
      expect(b.calls).toBeGreaterThanOrEqual(10);
    });

    it('refuses calls at once (UNAVAILABLE, nothing sent) when its only replica has stopped answering, also under the panic rule', async () => {
      const a = await startReplica();
      replicas.push(a);
      const client = balancedClient([a.port], 500, probing);
      a.ready = false; // NOT_SERVING: the panic rule would still send it calls
      await send(client, 1);
      a.hung = true;
      await noticed();
      a.calls = 0;
      const refused = await checkHealth(client, SERVICE, 5000).catch((err: grpc.ServiceError) => err);
      expect(refused).toMatchObject({ code: grpc.status.UNAVAILABLE });
      expect(client.getChannel().getConnectivityState(false)).toBe(grpc.connectivityState.TRANSIENT_FAILURE);
      expect(a.calls).toBe(0);
      a.hung = false;
      await noticed();
      await send(client, 1);
      expect(a.calls).toBe(1);
    });
  });

  it('works with a dns:/// target', async () => {
    const a = await startReplica();
    replicas.push(a);
    const client = createHealthClient(`dns:///localhost:${a.port}`, grpc.credentials.createInsecure(), balancedChannelOptions(SERVICE));
    clients.push(client);
    await send(client, 5);
    expect(a.calls).toBe(5);
  });
});

/**
 * A name whose addresses the test sets, standing in for DNS (a headless Service whose pods change);
 * it counts how often the channel asks to resolve it again.
 */
const testName = { addresses: [] as number[], resolutions: 0 };
class TestResolver implements experimental.Resolver {
  constructor(
    _target: unknown,
    private readonly listener: experimental.ResolverListener,
  ) {}
  updateResolution(): void {
    testName.resolutions++;
    const endpoints = testName.addresses.map((port) => ({ addresses: [{ host: '127.0.0.1', port }] }));
    setImmediate(() => this.listener(experimental.statusOrFromValue(endpoints), {}, null, ''));
  }
  destroy(): void {}
  static getDefaultAuthority(): string {
    return 'replicas';
  }
}
experimental.registerResolver('tessera-test', TestResolver);

describe('re-resolution', () => {
  it('reaches a replica added later once a server closes a connection at its maximum age, while the others stay up', async () => {
    const ageing = serverOptions({ minPingIntervalMs: 10_000, maxConnectionAgeMs: 500, maxConnectionAgeGraceMs: 1000 });
    const a = await startReplica({ server: ageing });
    const b = await startReplica();
    replicas.push(a, b);
    testName.addresses = [a.port, b.port];
    testName.resolutions = 0;
    const client = createHealthClient('tessera-test:replicas', grpc.credentials.createInsecure(), balancedChannelOptions(SERVICE));
    clients.push(client);
    await bothConnected(client, a, b);
    // A third replica appears under the name; nothing tells the client but the next resolution.
    // B's connection never closes, so the channel as a whole never stops being ready.
    const c = await startReplica();
    replicas.push(c);
    testName.addresses = [a.port, b.port, c.port];
    const deadline = Date.now() + 10_000;
    while (c.calls === 0 && Date.now() < deadline) {
      await send(client, 1);
      await sleep(20);
    }
    expect(c.calls).toBeGreaterThan(0);
  });
});

describe('health service shutdown', () => {
  it('ends open Watch streams (a probe or any other watcher), so a graceful server shutdown does not wait for them', async () => {
    const a = await startReplica();
    replicas.push(a);
    const watcher = createHealthClient(`127.0.0.1:${a.port}`);
    clients.push(watcher);
    const statuses: string[] = [];
    const ended = new Promise<void>((resolve) => {
      const stream = watcher.Watch({ service: SERVICE });
      stream.on('data', (res: { status: string }) => statuses.push(res.status));
      stream.on('error', () => resolve());
      stream.on('end', () => resolve());
    });
    while (statuses.length === 0) await sleep(20);
    a.health.shutdown();
    const started = Date.now();
    await new Promise<void>((resolve) => a.server.tryShutdown(() => resolve()));
    await ended;
    expect(Date.now() - started).toBeLessThan(2000);
    expect(statuses).toEqual(['SERVING', 'NOT_SERVING']);
  });
});

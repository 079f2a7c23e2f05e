/**
 * A Redis Cluster of three masters with a replica each, where one replica falls behind its master
 * (SIGSTOP, then a 32 MB write fills the replication link, so what follows stays in the master's
 * own memory) and that master is killed (-9): the lagging replica is promoted without the last
 * writes. Idempotency claims and stored answers (IDEMPOTENCY_WRITE_ACK) and dedupe's fingerprint
 * index (VAULT_WRITE_ACK) must not be relied on before a replica has them, or a retry after the
 * failover pays a second time and a dedupe makes a second live token for one card.
 */
import {
  aCard,
  apiClient,
  clusterNodes,
  clusterStateOk,
  nodeProcess,
  PspRecorder,
  replicasInSync,
  restartClusterNode,
  startRedisCluster,
  startStack,
  TEST_CARDS,
  waitUntil,
  withNode,
  type RecordedRequest,
  type RedisCluster,
  type Stack,
  type TestResponse,
} from './harness';

jest.setTimeout(180_000);

let cluster: RedisCluster;
let stack: Stack;
let psp: PspRecorder;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  // A short node timeout fails a dead master over in a few seconds; without full coverage the
  // other masters keep serving while the dead one's slots have no owner.
  cluster = await startRedisCluster({ replicas: 1, nodeTimeoutMs: 2000, args: ['--cluster-require-full-coverage', 'no'] });
  psp = await new PspRecorder().start();
  stack = await startStack(cluster, {
    env: { REDIS_CLUSTER_NODES: cluster.nodes.join(','), VAULT_WRITE_ACK: 'replica:1:300', IDEMPOTENCY_WRITE_ACK: 'replica:1:300' },
    serviceEnv: { vault: { REDIS_COMMAND_TIMEOUT_MS: '1500' } },
  });
});

afterAll(async () => {
  // A stopped node would only die of the SIGKILL after the stop's grace period.
  for (const proc of cluster?.processes ?? []) proc.signal('SIGCONT');
  await psp?.stop();
  await stack?.stop();
  await cluster?.stop();
});

/** A live node to ask about the cluster: one that is not `except`. */
function observerBesides(except: string[]): string {
  const address = cluster.nodes.find((node) => !except.includes(node) && nodeProcess(cluster, node).running);
  if (address === undefined) throw new Error('no live node to observe the cluster');
  return address;
}

/** The master (host:port) holding a key that matches `pattern` and whose value satisfies `wanted`. */
async function masterHolding(pattern: string, wanted: (value: string | null) => boolean = () => true): Promise<string> {
  const masters = (await clusterNodes(cluster.nodes[0]!)).filter((n) => n.master && n.slots.length > 0 && !n.failed);
  for (const master of masters) {
    const found = await withNode(master.address, async (client) => {
      const [, keys] = await client.scan('0', 'MATCH', pattern, 'COUNT', 10_000);
      for (const key of keys) if (wanted(await client.get(key))) return true;
      return false;
    });
    if (found) return master.address;
  }
  throw new Error(`no master holds a key matching ${pattern}`);
}

/**
 * Stops the master's replica and writes 32 MB on the master: that fills the socket buffers of
 * the replication link, so every later write of this master exists in its memory alone.
 */
async function lagReplicaOf(master: string): Promise<string> {
  const nodes = await clusterNodes(master);
  const id = nodes.find((n) => n.address === master)!.id;
  const replica = nodes.find((n) => !n.master && n.masterId === id)!;
  nodeProcess(cluster, replica.address).signal('SIGSTOP');
  await withNode(master, async (client) => {
    const slots = new Set(nodes.find((n) => n.id === id)!.slots);
    for (let i = 0; ; i++) {
      if (slots.has((await client.call('CLUSTER', 'KEYSLOT', `ballast:${i}`)) as number)) {
        await client.set(`ballast:${i}`, Buffer.alloc(32 * 1024 * 1024, 'x'));
        await client.del(`ballast:${i}`);
        return;
      }
    }
  });
  return replica.address;
}

/**
 * kill -9 of the master, then the lagging replica resumes and is promoted; the old master comes
 * back as its replica, so WAIT can be satisfied again, and the cluster settles.
 */
async function failOverTo(master: string, replica: string): Promise<void> {
  await nodeProcess(cluster, master).stop('SIGKILL');
  nodeProcess(cluster, replica).signal('SIGCONT');
  const replicaId = (await clusterNodes(replica)).find((n) => n.address === replica)!.id;
  await waitUntil(
    async () => (await clusterNodes(replica)).find((n) => n.id === replicaId)?.master === true,
    'the lagging replica to be promoted',
  );
  await restartClusterNode(cluster, master);
  const observer = observerBesides([master]);
  await waitUntil(async () => {
    const seen = (await clusterNodes(replica)).find((n) => n.address === master);
    return seen !== undefined && !seen.master && !seen.failed && seen.masterId === replicaId;
  }, 'the old master to rejoin as a replica');
  await waitUntil(() => replicasInSync(observer), 'every replica in sync');
  await waitUntil(() => clusterStateOk(observer), 'every node to report cluster_state:ok');
}

/** What a client does after a failover: the same request again while it answers 503 or 409 (in progress). */
async function retryUntilSettled(send: () => Promise<TestResponse>): Promise<TestResponse> {
  for (let attempt = 0; ; attempt++) {
    const res = await send();
    if ((res.status !== 503 && res.status !== 409) || attempt >= 100) return res;
    await sleep(300);
  }
}

describe('Idempotency-Keys across the failover of a master whose replica lags', () => {
  const orderOf = (req: RecordedRequest): string => (JSON.parse(req.body.toString()) as { order: string }).order;
  const chargesOf = (order: string): number => psp.requests.filter((req) => orderOf(req) === order).length;

  it('charges every key once: a claim no replica acknowledged answers 503 without contacting the PSP, and the retry pays', async () => {
    const call = apiClient(stack, stack.createKey('acme').apiKey);
    const token = await retryUntilSettled(() => call('POST', '/v1/token', aCard({ cvv: undefined })));
    expect(token.status).toBe(201);
    const pay = (order: string) =>
      call(
        'POST',
        '/v1/proxy',
        {
          method: 'post',
          token: token.body.token,
          pspUrl: `${psp.url}/charges`,
          pspBody: JSON.stringify({ order, card: '[CARD_NUMBER]' }),
        },
        { 'idempotency-key': order },
      );
    expect((await retryUntilSettled(() => pay('probe'))).status).toBe(200);
    const master = await masterHolding('*idempotency:*');

    const replica = await lagReplicaOf(master);
    // Answered: the PSP answers at once. In flight: the PSP holds its answer until after the failover.
    const answered = Array.from({ length: 10 }, (_, i) => `answered-${i}`);
    const inFlight = Array.from({ length: 10 }, (_, i) => `in-flight-${i}`);
    const held: Array<() => void> = [];
    let holding = true;
    psp.reply = (req, res) => {
      const reply = () => PspRecorder.okReply(req, res);
      if (holding && orderOf(req).startsWith('in-flight-')) held.push(reply);
      else reply();
    };
    const firstAnswers = await Promise.all(answered.map(pay));
    let inFlightSettled = 0;
    const inFlightAnswers = inFlight.map((order) => pay(order).finally(() => inFlightSettled++));
    await waitUntil(async () => inFlightSettled + held.length === inFlight.length, 'each in-flight call to reach the PSP or be answered');

    await failOverTo(master, replica);
    holding = false;
    const retries = await Promise.all([...answered, ...inFlight].map((order) => retryUntilSettled(() => pay(order))));
    for (const reply of held) reply();
    const firsts = [...firstAnswers, ...(await Promise.all(inFlightAnswers))];

    const keys = [...answered, ...inFlight];
    const chargedTwice = keys.filter((order) => chargesOf(order) > 1);
    expect(chargedTwice).toEqual([]);
    // The claims that could not be confirmed were refused before the vault or the PSP was asked ...
    for (const first of firsts) {
      if (first.status !== 200)
        expect({ status: first.status, code: first.body?.error?.code }).toEqual({ status: 503, code: 'service_unavailable' });
    }
    // ... and every key was paid once in the end: by its first call or by the retry.
    expect(retries.map((r) => r.status)).toEqual(keys.map(() => 200));
    expect(keys.filter((order) => chargesOf(order) !== 1)).toEqual([]);
  });
});

describe('dedupe across the failover of a master whose replica lags', () => {
  it('keeps one live token per card: an index entry no replica acknowledged fails the tokenization with 503', async () => {
    const call = apiClient(stack, stack.createKey('globex').apiKey);
    const dedupe = () => call('POST', '/v1/token', aCard({ number: TEST_CARDS.mastercard, cvv: undefined, dedupe: true }));
    // Where this card's index entry lives: made once, then the token is deleted (the entry with it).
    const probe = await retryUntilSettled(dedupe);
    // The whole answer on a failure: a 503 here says which store the previous failover left unwritable.
    expect({ status: probe.status, error: probe.body?.error }).toEqual({ status: 201, error: undefined });
    const master = await masterHolding('*card:fp:*', (value) => value === probe.body.token);
    expect((await call('DELETE', `/v1/token/${probe.body.token}`)).status).toBe(204);

    const replica = await lagReplicaOf(master);
    // A card whose own master is the lagging one is refused (its WAIT fails too): try a few.
    const during: TestResponse[] = [];
    for (let i = 0; i < 8 && !during.some((r) => r.status === 201); i++) during.push(await dedupe());
    await failOverTo(master, replica);
    const after = await retryUntilSettled(dedupe);
    expect(after.status).toBe(201);
    const again = await dedupe();

    const tokens = [...new Set([...during, after, again].filter((r) => r.status === 201).map((r) => r.body.token as string))];
    const live: string[] = [];
    for (const token of tokens) if ((await call('GET', `/v1/token/${token}`)).status === 200) live.push(token);
    expect(live).toEqual([after.body.token]);
    expect(again.body.token).toBe(after.body.token);
    for (const answer of during) {
      if (answer.status !== 201)
        expect({ status: answer.status, code: answer.body?.error?.code }).toEqual({ status: 503, code: 'service_unavailable' });
    }
  });
});

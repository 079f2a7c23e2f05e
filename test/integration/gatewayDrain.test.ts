/**
 * SIGTERM drains the gateway: keep-alive clients sending without pause, some of their requests
 * held for a while by the PSP, and the gateway told to stop. Every request the gateway read is
 * answered (no reset, no hang-up), every answer from then on says `Connection: close`, a client
 * that tries again finds the port closed (ECONNREFUSED: nothing was sent), and the process exits
 * by itself without cutting connections.
 */
import http from 'node:http';
import { aCard, apiClient, useStack } from './harness';

jest.setTimeout(120_000);

const PSP_HOLD_MS = 1500;
const env = useStack({ psp: true, env: { PROXY_TIMEOUT_MS: '8000', PSP_TIMEOUT_MS: '5000' } });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Outcome {
  sentAt: number;
  status?: number;
  connection?: string | undefined;
  error?: string;
}

function send(agent: http.Agent, baseUrl: string, apiKey: string, route: string, body?: unknown): Promise<Outcome> {
  const sentAt = Date.now();
  const url = new URL(route, baseUrl);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve) => {
    const req = http.request(
      url,
      {
        agent,
        method: payload === undefined ? 'GET' : 'POST',
        headers: { 'x-api-key': apiKey, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ sentAt, status: res.statusCode ?? 0, connection: res.headers.connection }));
        res.on('error', (err: NodeJS.ErrnoException) => resolve({ sentAt, error: err.code ?? err.message }));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ sentAt, error: err.code ?? err.message }));
    req.end(payload);
  });
}

it('SIGTERM under keep-alive load: every request read is answered, later answers say Connection: close, and the gateway exits by itself', async () => {
  const replica = await env.stack.startGatewayReplica();
  const key = env.stack.createKey('acme');
  const call = apiClient(env.stack, key.apiKey);
  const { token } = (await call('POST', '/v1/token', aCard({ cvv: undefined }))).body;
  // The signal comes while a slow request is held at the PSP, one that has been in flight for a
  // while, whatever the machine's speed: the moment is taken from the PSP, not from a clock.
  let loadStartedAt = Infinity;
  let slowHeld: () => void = () => undefined;
  const slowInFlight = new Promise<void>((resolve) => {
    slowHeld = resolve;
  });
  env.psp.reply = (_req, res) => {
    if (Date.now() - loadStartedAt >= 1000) slowHeld();
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    }, PSP_HOLD_MS);
  };

  let signalledAt = Infinity;
  const outcomes: Outcome[] = [];
  // Each client is one keep-alive connection that sends its next request as soon as the last is answered.
  const client = async (slow: boolean): Promise<void> => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (;;) {
        const outcome = slow
          ? await send(agent, replica.baseUrl, key.apiKey, '/v1/proxy', { method: 'post', token, pspUrl: `${env.psp.url}/slow` })
          : await send(agent, replica.baseUrl, key.apiKey, `/v1/token/${token}`);
        outcomes.push(outcome);
        if (outcome.error !== undefined) return;
      }
    } finally {
      agent.destroy();
    }
  };
  loadStartedAt = Date.now();
  const clients = [false, false, false, false, true, true].map((slow) => client(slow));

  await slowInFlight;
  await sleep(PSP_HOLD_MS / 5);
  signalledAt = Date.now();
  replica.process.signal('SIGTERM');
  const exitCode = await replica.process.exit();
  await Promise.all(clients);

  // Load ran before the signal, and slow requests were in flight when it came.
  expect(outcomes.filter((o) => o.sentAt < signalledAt && o.status === 200).length).toBeGreaterThan(10);
  // No request the gateway read was reset or left without an answer; a client that tried again
  // after its connection was closed found the port closed, so that request never started.
  const errors = outcomes.filter((o) => o.error !== undefined).map((o) => o.error);
  expect(errors.filter((e) => e !== 'ECONNREFUSED')).toEqual([]);
  expect(errors).toHaveLength(6);
  for (const o of outcomes.filter((o) => o.status !== undefined)) expect(o.status).toBe(200);
  // A slow request already in flight at the signal was answered in full, with Connection: close.
  expect(outcomes.some((o) => o.sentAt < signalledAt - 100 && o.status === 200 && o.connection === 'close')).toBe(true);
  // From shortly after the signal, every answer closes its connection.
  const after = outcomes.filter((o) => o.sentAt > signalledAt + 200 && o.status !== undefined);
  for (const o of after) expect(o.connection).toBe('close');
  expect(exitCode).toBe(0);
  expect(replica.process.output).not.toContain('forcing open connections closed');
});

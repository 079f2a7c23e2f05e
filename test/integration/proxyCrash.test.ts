/**
 * Never charge twice: the proxy is killed (SIGKILL) while the PSP holds a call, then restarted,
 * and the client retries with the same Idempotency-Key. The PSP may have acted on the first
 * request, so the gateway answers 502 psp_outcome_unknown, keeps that answer under the key and
 * replays it: the recording PSP counts exactly one request per key, for a lone call and for a
 * crowd of concurrent calls that travel to the proxy in one ForwardBatch. The same holds when the
 * gateway itself dies mid-call: its claim on the key is never simply released.
 */
import http from 'node:http';
import { aCard, apiClient, PspRecorder, useStack, type Stack } from './harness';

jest.setTimeout(120_000);

const env = useStack({ psp: true, env: { PSP_TIMEOUT_MS: '20000', PROXY_TIMEOUT_MS: '25000' } });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitUntil(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** The PSP reads each request and holds it unanswered, as a slow acquirer would. */
function holdEveryCall(psp: PspRecorder): http.ServerResponse[] {
  const held: http.ServerResponse[] = [];
  psp.reply = (_req, res) => {
    held.push(res);
  };
  return held;
}

async function killProxyAndRestart(): Promise<void> {
  await env.stack.proxy.stop('SIGKILL');
  await env.stack.startProxy();
  await waitUntil(async () => (await fetch(`${env.stack.baseUrl}/readyz`)).status === 200, 'the gateway to reach the new proxy');
}

let call: ReturnType<typeof apiClient>;
let token: string;

beforeAll(async () => {
  call = apiClient(env.stack, env.stack.createKey('acme').apiKey);
  token = (await call('POST', '/v1/token', aCard({ cvv: undefined }))).body.token;
});

beforeEach(() => env.psp.reset());

const charge = (key: string, amount = 1000) =>
  call(
    'POST',
    '/v1/proxy',
    { method: 'post', token, pspUrl: `${env.psp.url}/charges`, pspBody: `{"amount":${amount},"card":"[CARD_NUMBER]"}` },
    { 'idempotency-key': key },
  );

it('a proxy killed while the PSP holds the call: 502 psp_outcome_unknown, replayed for the same key, and the PSP is called once', async () => {
  holdEveryCall(env.psp);
  const first = charge('order-lone');
  await waitUntil(() => env.psp.requests.length === 1, 'the PSP to receive the charge');

  await killProxyAndRestart();
  const answer = await first;
  expect({ status: answer.status, code: answer.body?.error?.code }).toEqual({ status: 502, code: 'psp_outcome_unknown' });
  expect(answer.headers.get('x-tessera-error')).toBe('psp_outcome_unknown');

  env.psp.reply = PspRecorder.okReply;
  const retry = await charge('order-lone');
  expect({ status: retry.status, code: retry.body?.error?.code }).toEqual({ status: 502, code: 'psp_outcome_unknown' });
  expect(retry.headers.get('idempotent-replayed')).toBe('true');
  expect(env.psp.requests).toHaveLength(1);

  // The restarted proxy does reach the PSP: a new key is charged, so the count above is meaningful.
  expect((await charge('order-after-restart')).status).toBe(200);
  expect(env.psp.requests).toHaveLength(2);
});

it('a proxy killed while the PSP holds a batch of concurrent charges: every key answers psp_outcome_unknown and reaches the PSP once', async () => {
  const keys = Array.from({ length: 12 }, (_, i) => `order-batch-${i}`);
  holdEveryCall(env.psp);
  // Redis paused while the requests arrive: their lookups are answered in one burst, so they reach
  // the gateway's batcher in the same turn and travel to the proxy as one ForwardBatch.
  env.redis.process.signal('SIGSTOP');
  const firsts = keys.map((key, i) => charge(key, 100 + i));
  await sleep(300);
  env.redis.process.signal('SIGCONT');
  await waitUntil(() => env.psp.requests.length === keys.length, 'the PSP to receive every charge');

  await killProxyAndRestart();
  for (const answer of await Promise.all(firsts)) {
    expect({ status: answer.status, code: answer.body?.error?.code }).toEqual({ status: 502, code: 'psp_outcome_unknown' });
  }

  env.psp.reply = PspRecorder.okReply;
  const retries = await Promise.all(keys.map((key, i) => charge(key, 100 + i)));
  for (const retry of retries) {
    expect({ status: retry.status, code: retry.body?.error?.code, replayed: retry.headers.get('idempotent-replayed') }).toEqual({
      status: 502,
      code: 'psp_outcome_unknown',
      replayed: 'true',
    });
  }
  expect(env.psp.requests).toHaveLength(keys.length);
  expect(new Set(env.psp.requests.map((r) => r.body.toString('utf8').match(/"amount":(\d+)/)?.[1])).size).toBe(keys.length);
});

it('a gateway killed while the PSP holds the call: the same key is refused while the claim is fresh, then answered psp_outcome_unknown, never sent again', async () => {
  // This gateway's claims last PROXY_TIMEOUT_MS + 10 s: 12 s.
  const replica = await env.stack.startGatewayReplica({ PROXY_TIMEOUT_MS: '2000' });
  const viaReplica = apiClient({ baseUrl: replica.baseUrl } as Stack, env.stack.createKey('acme').apiKey);
  const body = { method: 'post', token, pspUrl: `${env.psp.url}/charges`, pspBody: '{"amount":7,"card":"[CARD_NUMBER]"}' };
  holdEveryCall(env.psp);
  const claimedAt = Date.now();
  const first = viaReplica('POST', '/v1/proxy', body, { 'idempotency-key': 'order-gateway-crash' }).catch(() => undefined);
  await waitUntil(() => env.psp.requests.length === 1, 'the PSP to receive the charge');
  await replica.process.stop('SIGKILL');
  await first;
  env.psp.reply = PspRecorder.okReply;

  const retry = () => call('POST', '/v1/proxy', body, { 'idempotency-key': 'order-gateway-crash' });
  expect((await retry()).body?.error?.code).toBe('idempotency_in_progress');
  await sleep(Math.max(0, claimedAt + 12_500 - Date.now()));
  const afterClaim = await retry();
  expect({ status: afterClaim.status, code: afterClaim.body?.error?.code }).toEqual({ status: 502, code: 'psp_outcome_unknown' });
  const replayed = await retry();
  expect({ status: replayed.status, code: replayed.body?.error?.code }).toEqual({ status: 502, code: 'psp_outcome_unknown' });
  expect(replayed.headers.get('idempotent-replayed')).toBe('true');
  expect(env.psp.requests).toHaveLength(1);
});

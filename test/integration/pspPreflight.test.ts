import { startFakeDns, type FakeDns } from '@tessera/test-support';
import {
  aCard,
  apiClient,
  findCardDataInLogs,
  PspRecorder,
  type RedisServer,
  type Stack,
  startRedis,
  startStack,
  TEST_CARDS,
  TEST_CVV,
} from './harness';

/**
 * The proxy's egress pre-flight through the real processes, with the proxy's PSP host names
 * answered by a fake DNS server (PSP_DNS_SERVERS): a destination is judged whole (URL, DNS, every
 * address) before the vault renders, and a render uses up the token's one-time CVV, so no
 * destination may be refused after its render.
 */

jest.setTimeout(60_000);

/** A host answering 127.0.0.1 (the recorder; the test stack allows 127.0.0.1/32) once, then a private address. */
const REBINDING_HOST = 'rebind.psp.test';
/** A host whose every answer is private. */
const PRIVATE_HOST = 'internal.psp.test';

let dns: FakeDns;
let redis: RedisServer;
let stack: Stack;
let psp: PspRecorder;
let call: ReturnType<typeof apiClient>;
const aLookups: Record<string, number> = {};

beforeAll(async () => {
  dns = await startFakeDns((name) => {
    aLookups[name] = (aLookups[name] ?? 0) + 1;
    if (name === REBINDING_HOST) return aLookups[name] === 1 ? '127.0.0.1' : '10.0.0.1';
    if (name === PRIVATE_HOST) return '10.0.0.1';
    return undefined;
  });
  redis = await startRedis();
  stack = await startStack(redis, { serviceEnv: { proxy: { PSP_DNS_SERVERS: dns.server } } });
  psp = await new PspRecorder().start();
  call = apiClient(stack, stack.createKey('acme', 'test').apiKey);
});

afterAll(async () => {
  await psp?.stop();
  await stack?.stop();
  await redis?.stop();
  await dns?.close();
});

beforeEach(() => psp.reset());

async function tokenWithCvv(): Promise<string> {
  const res = await call('POST', '/v1/token', aCard());
  expect(res.status).toBe(201);
  expect(res.body.cvvAvailable).toBe(true);
  return res.body.token as string;
}

const charge = (token: string, host: string) => ({
  method: 'post',
  token,
  pspUrl: `http://${host}:${psp.port}/v1/charges`,
  pspHeaders: { 'content-type': 'application/json' },
  pspBody: '{"number":"[CARD_NUMBER]","cvc":"[CARD_CVV]"}',
});

it('refuses a PSP host that resolves to a private address before the render: the CVV is still there for the next charge', async () => {
  const token = await tokenWithCvv();

  const refused = await call('POST', '/v1/proxy', charge(token, PRIVATE_HOST));
  expect(refused.status).toBe(400);
  expect(refused.headers.get('x-tessera-error')).toBe('psp_destination_forbidden');
  expect(refused.body.error).toMatchObject({ code: 'psp_destination_forbidden', param: 'pspUrl' });
  expect(refused.body.error.message).toBe('The pspUrl host resolves to a private address.');
  expect(psp.connections).toBe(0);

  const next = await call('POST', '/v1/proxy', charge(token, '127.0.0.1'));
  expect(next.status).toBe(200);
  expect(JSON.parse(psp.requests[0]?.body.toString() ?? '{}')).toEqual({ number: TEST_CARDS.visa, cvc: TEST_CVV });
});

it('sends to the address the pre-flight checked when DNS answers a private address afterwards (rebinding): the card data reaches that PSP, never a refusal after the render used up the CVV', async () => {
  const token = await tokenWithCvv();

  const res = await call('POST', '/v1/proxy', charge(token, REBINDING_HOST));
  expect(res.status).toBe(200);
  expect(psp.requests).toHaveLength(1);
  expect(psp.requests[0]?.headers.host).toBe(`${REBINDING_HOST}:${psp.port}`);
  expect(JSON.parse(psp.requests[0]?.body.toString() ?? '{}')).toEqual({ number: TEST_CARDS.visa, cvc: TEST_CVV });
  // One lookup per request: the connection went to the pre-flight's answer.
  expect(aLookups[REBINDING_HOST]).toBe(1);

  // The next request is judged on the answer DNS gives now, before any render.
  const again = await call('POST', '/v1/proxy', charge(await tokenWithCvv(), REBINDING_HOST));
  expect(again.status).toBe(400);
  expect(again.body.error.message).toBe('The pspUrl host resolves to a private address.');
  expect(psp.requests).toHaveLength(1);
});

it('never logs the card data of these calls', () => {
  expect(findCardDataInLogs(stack.logs(), [TEST_CARDS.visa], [TEST_CVV])).toEqual([]);
});

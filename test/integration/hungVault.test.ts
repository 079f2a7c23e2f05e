/**
 * A hung vault (SIGSTOP: its connections stay open, nothing answers) while merchants keep paying
 * with Idempotency-Keys, and tokenize and attach a CVC under keys. The stack runs on its default
 * timeouts (VAULT_TIMEOUT_MS 2000 in gateway and proxy), as the fault run that found keys poisoned
 * by a stored `504 upstream_timeout` did. What must hold: the PSP is never reached while the vault
 * is frozen, so every answer in the freeze is a `503` with `Retry-After` that frees its key; once
 * the gateway has noticed the hang it answers at once instead of waiting out a deadline per call;
 * `/readyz` follows; after SIGCONT everything recovers by itself and each key, retried, reaches the
 * PSP exactly once.
 */
import { aCard, apiClient, httpOk, useStack, waitFor, type TestResponse } from './harness';

jest.setTimeout(90_000);

/** The documented default of VAULT_TIMEOUT_MS (gateway and proxy), which the stack runs with. */
const VAULT_TIMEOUT_MS = 2000;
/** The documented defaults of GRPC_LIVENESS_INTERVAL_MS and GRPC_LIVENESS_TIMEOUT_MS. */
const LIVENESS_INTERVAL_MS = 500;
const LIVENESS_TIMEOUT_MS = 1000;
/** Scheduling and HTTP on a loaded test machine. */
const MARGIN_MS = 1000;
const FREEZE_MS = 7000;
/** One new payment this often during the freeze, each with its own key, none waiting for another. */
const PAYMENT_EVERY_MS = 250;

const env = useStack({ psp: true });
let call: ReturnType<typeof apiClient>;

beforeAll(() => {
  call = apiClient(env.stack, env.stack.createKey('acme').apiKey);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Answer {
  key: string;
  sentAt: number;
  ms: number;
  res: TestResponse;
}

const readyz = async () => (await fetch(`${env.stack.baseUrl}/readyz`)).status;

it('a vault frozen with SIGSTOP poisons no Idempotency-Key: 503 with Retry-After during the freeze, at once after detection; each key retried after SIGCONT reaches the PSP once', async () => {
  const { token } = (await call('POST', '/v1/token', aCard({ cvv: undefined }))).body as { token: string };
  const payment = (amount: number) => ({
    method: 'post',
    token,
    pspUrl: `${env.psp.url}/charges`,
    pspBody: `{"amount":${amount},"card":"[CARD_NUMBER]"}`,
  });
  const pay = async (key: string, amount: number): Promise<Answer> => {
    const sentAt = Date.now();
    const res = await call('POST', '/v1/proxy', payment(amount), { 'idempotency-key': key });
    return { key, sentAt, ms: Date.now() - sentAt, res };
  };
  expect((await pay('warm-up', 1)).res.status).toBe(200);
  env.psp.reset();

  const vault = env.stack.vault;
  vault.signal('SIGSTOP');
  const frozenAt = Date.now();
  const payments: Array<Promise<Answer>> = [];
  const tokenizeKey = `hung-token-${frozenAt}`;
  const cvcKey = `hung-cvc-${frozenAt}`;
  let tokenize: Promise<TestResponse> | undefined;
  let attachCvc: Promise<TestResponse> | undefined;
  const readiness: Array<Promise<number>> = [];
  let pspRequestsDuringFreeze = -1;
  try {
    for (let i = 0; Date.now() - frozenAt < FREEZE_MS; i++) {
      payments.push(pay(`hung-${frozenAt}-${i}`, 100 + i));
      if (i === 4) tokenize = call('POST', '/v1/token', aCard({ cvv: undefined }), { 'idempotency-key': tokenizeKey });
      if (i === 8) attachCvc = call('POST', `/v1/token/${token}/cvc`, { cvv: '123' }, { 'idempotency-key': cvcKey });
      if (i % 4 === 0) readiness.push(readyz());
      await sleep(PAYMENT_EVERY_MS);
    }
    await Promise.all([...payments, ...readiness]);
    pspRequestsDuringFreeze = env.psp.requests.length;
  } finally {
    vault.signal('SIGCONT');
  }
  const answers = await Promise.all(payments);
  const tokenized = await tokenize!;
  const attachedCvc = await attachCvc!;

  // Nothing reached the PSP, and every client was told so: 503, retry with the same key.
  expect(pspRequestsDuringFreeze).toBe(0);
  for (const { key, res } of answers) {
    expect({ key, status: res.status, code: res.body?.error?.code }).toEqual({ key, status: 503, code: 'service_unavailable' });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  }
  for (const vaultCall of [tokenized, attachedCvc]) {
    expect({ status: vaultCall.status, code: vaultCall.body?.error?.code }).toEqual({ status: 503, code: 'service_unavailable' });
  }

  // Each waited at most one deadline; once the gateway had noticed the hang (within its liveness
  // interval + timeout) it refused at once, without sending the call anywhere, to the end of the freeze.
  for (const { key, ms } of answers)
    expect({ key, withinADeadline: ms < VAULT_TIMEOUT_MS + MARGIN_MS }).toEqual({ key, withinADeadline: true });
  const waited = answers.filter((a) => a.ms >= VAULT_TIMEOUT_MS);
  const refusedAtOnce = answers.filter((a) => a.ms < VAULT_TIMEOUT_MS);
  expect(refusedAtOnce.length).toBeGreaterThan(answers.length / 2);
  const detectedBy = Math.min(...refusedAtOnce.map((a) => a.sentAt));
  expect(waited.filter((a) => a.sentAt > detectedBy).map(({ key, ms }) => ({ key, ms }))).toEqual([]);
  expect(detectedBy - frozenAt).toBeLessThan(LIVENESS_INTERVAL_MS + LIVENESS_TIMEOUT_MS + MARGIN_MS);
  expect(await Promise.all(readiness)).not.toContain(200);

  // The vault answers again: the gateway notices by itself.
  await waitFor(() => httpOk(`${env.stack.baseUrl}/readyz`), 'the gateway to be ready again');

  // 0 poisoned keys: every key, retried, runs now and reaches the PSP exactly once.
  const retries = await Promise.all(answers.map(({ key }, i) => pay(key, 100 + i)));
  for (const { key, res } of retries) {
    expect({ key, status: res.status, replayed: res.headers.get('idempotent-replayed') }).toEqual({ key, status: 200, replayed: null });
  }
  const amounts = env.psp.requests.map((r) => Number(/"amount":(\d+)/.exec(r.body.toString('utf8'))?.[1]));
  expect(amounts.sort((a, b) => a - b)).toEqual(answers.map((_, i) => 100 + i));
  // The keys of the tokenize and the CVC attach were freed too: their retries run.
  expect((await call('POST', '/v1/token', aCard({ cvv: undefined }), { 'idempotency-key': tokenizeKey })).status).toBe(201);
  const cvcRetry = await call('POST', `/v1/token/${token}/cvc`, { cvv: '123' }, { 'idempotency-key': cvcKey });
  expect({
    status: cvcRetry.status,
    cvvAvailable: cvcRetry.body?.cvvAvailable,
    replayed: cvcRetry.headers.get('idempotent-replayed'),
  }).toEqual({
    status: 200,
    cvvAvailable: true,
    replayed: null,
  });
});

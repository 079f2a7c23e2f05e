import { aCard, apiClient, TEST_CARDS, useStack } from './harness';

jest.setTimeout(60_000);

const env = useStack({ env: { VAULT_TIMEOUT_MS: '1000' }, psp: true });

it('keeps every token through a crash of the vault process, and answers 503 while it is down', async () => {
  const key = env.stack.createKey('acme', 'test');
  const call = apiClient(env.stack, key.apiKey);
  const cards = [TEST_CARDS.visa, TEST_CARDS.mastercard, TEST_CARDS.visaDeclined];
  const tokens: Array<{ token: string; last4: string }> = [];
  for (const number of cards) {
    const res = await call('POST', '/v1/token', aCard({ number, cvv: undefined }));
    expect(res.status).toBe(201);
    tokens.push({ token: res.body.token, last4: res.body.last4 });
  }

  await env.stack.vault.stop('SIGKILL');
  const started = Date.now();
  const whileDown = await call('GET', `/v1/token/${tokens[0]!.token}`);
  expect(whileDown.status).toBe(503);
  expect(whileDown.body.error.code).toBe('service_unavailable');
  expect(Date.now() - started).toBeLessThan(3000);
  expect((await call('GET', '/readyz')).status).toBe(503);

  await env.stack.startVault();
  // The gateway reconnects on its own; give the channel a moment to notice the vault is back.
  let readBack = await call('GET', `/v1/token/${tokens[0]!.token}`);
  for (let i = 0; i < 50 && readBack.status === 503; i++) {
    await new Promise((r) => setTimeout(r, 100));
    readBack = await call('GET', `/v1/token/${tokens[0]!.token}`);
  }
  // The proxy has its own channel to the vault, with its own reconnect backoff: /readyz is 200
  // only once the proxy reaches the vault too (under load it can lag the gateway's channel).
  for (let i = 0; i < 50 && (await call('GET', '/readyz')).status !== 200; i++) await new Promise((r) => setTimeout(r, 100));
  for (const { token, last4 } of tokens) {
    const res = await call('GET', `/v1/token/${token}`);
    expect(res.status).toBe(200);
    expect(res.body.last4).toBe(last4);
    const proxied = await call('POST', '/v1/proxy', { method: 'post', token, pspUrl: `${env.psp.url}/c`, pspBody: '[CARD_NUMBER]' });
    expect(proxied.status).toBe(200);
  }
  expect(env.psp.requests.map((r) => r.body.toString('utf8'))).toEqual(cards);
});

import { aCard, apiClient, TEST_CARDS, TEST_CVV, useStack } from './harness';
import { sample, scrape } from './metricsScrape';

jest.setTimeout(60_000);

// Port 0: each service picks a free port and logs it.
const env = useStack({ env: { METRICS_PORT: '0' }, psp: true });

it('exposes Prometheus metrics on METRICS_PORT: requests, latencies, vault operations and PSP status classes, without card data, tokens or keys', async () => {
  const key = env.stack.createKey('acme-metrics');
  const call = apiClient(env.stack, key.apiKey);
  const created = await call('POST', '/v1/token', aCard());
  expect(created.status).toBe(201);
  env.psp.reply = (_req, res) => {
    res.writeHead(402, { 'content-type': 'application/json' });
    res.end('{"declined":true}');
  };
  const token = created.body.token as string;
  expect(
    (await call('POST', '/v1/proxy', { method: 'post', token, pspUrl: `${env.psp.url}/c`, pspBody: '[CARD_NUMBER] [CARD_CVV]' })).status,
  ).toBe(402);
  expect((await call('GET', `/v1/token/${token}`)).status).toBe(200);

  const [gateway, vault, proxy] = await Promise.all([scrape(env.stack.gateway), scrape(env.stack.vault), scrape(env.stack.proxy)]);
  expect(sample(gateway, 'tessera_http_requests_total', { method: 'POST', route: '/v1/token', status: '201' })).toBe(1);
  expect(sample(gateway, 'tessera_http_requests_total', { method: 'GET', route: '/v1/token/:token', status: '200' })).toBe(1);
  expect(sample(gateway, 'tessera_http_request_duration_seconds_count', { method: 'POST', route: '/v1/proxy' })).toBe(1);
  expect(sample(vault, 'tessera_rpc_requests_total', { rpc: 'Tokenize', outcome: 'ok' })).toBe(1);
  expect(sample(vault, 'tessera_rpc_requests_total', { rpc: 'Render', outcome: 'ok' })).toBe(1);
  expect(sample(proxy, 'tessera_rpc_requests_total', { rpc: 'Forward', outcome: 'psp_4xx' })).toBe(1);
  expect(sample(proxy, 'tessera_rpc_duration_seconds_count', { rpc: 'Forward' })).toBe(1);
  expect(vault).toMatch(/process_cpu_seconds_total/);

  for (const text of [gateway, vault, proxy]) {
    expect(text).not.toContain(TEST_CARDS.visa);
    expect(text).not.toContain(token);
    expect(text).not.toContain(key.apiKey);
    expect(text).not.toContain('acme-metrics');
    expect(text).not.toMatch(new RegExp(`[^\\d.]${TEST_CVV}[^\\d.]`));
  }
});

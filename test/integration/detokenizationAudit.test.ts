import { Redis } from 'ioredis';
import { loggedIn } from './adminClient';
import { aCard, apiClient, TEST_CARDS, TEST_CVV, useStack } from './harness';

jest.setTimeout(60_000);

const env = useStack({ psp: true });

it('records every detokenizing proxy call (merchant, key id, token, PSP host, status, time) in a Redis stream, readable per merchant through the admin API, without card data', async () => {
  const acmeKey = env.stack.createKey('acme');
  const globexKey = env.stack.createKey('globex');
  const acme = apiClient(env.stack, acmeKey.apiKey);
  const globex = apiClient(env.stack, globexKey.apiKey);
  const { token } = (await acme('POST', '/v1/token', aCard())).body;
  const { token: globexToken } = (await globex('POST', '/v1/token', aCard({ cvv: undefined }))).body;

  const charge = { method: 'post', token, pspUrl: `${env.psp.url}/v1/charges?order=42`, pspBody: '{"n":"[CARD_NUMBER]","c":"[CARD_CVV]"}' };
  expect((await acme('POST', '/v1/proxy', charge)).status).toBe(200);
  // The CVV is gone now: the second call fails in the vault, and is recorded with its code.
  expect((await acme('POST', '/v1/proxy', charge)).status).toBe(422);
  // No body: nothing is rendered, nothing to audit.
  expect((await acme('POST', '/v1/proxy', { method: 'get', token, pspUrl: `${env.psp.url}/v1/charges/1` })).status).toBe(200);
  expect((await globex('POST', '/v1/proxy', { ...charge, token: globexToken, pspBody: '[CARD_NUMBER]' })).status).toBe(200);

  env.stack.createOperator('ops@tessera.test', 'correct horse battery staple', null);
  env.stack.createOperator('ops@acme.test', 'correct horse battery staple', 'acme');
  const platform = await loggedIn(env.stack.adminUrl, 'ops@tessera.test', 'correct horse battery staple');
  const acmeOps = await loggedIn(env.stack.adminUrl, 'ops@acme.test', 'correct horse battery staple');

  // Writes do not hold up the answer: give the last one a moment.
  let all = await platform.call('GET', '/detokenizations');
  for (let i = 0; i < 20 && all.body.entries.length < 3; i++) {
    await new Promise((r) => setTimeout(r, 50));
    all = await platform.call('GET', '/detokenizations');
  }
  expect(all.status).toBe(200);
  expect(all.body.entries).toHaveLength(3);
  const [globexEntry, acmeFailed, acmeOk] = all.body.entries;
  expect(acmeOk).toMatchObject({
    merchantId: 'acme',
    keyId: acmeKey.id,
    token,
    pspHost: `127.0.0.1:${env.psp.port}`,
    method: 'POST',
    status: 200,
    code: null,
  });
  expect(acmeFailed).toMatchObject({ merchantId: 'acme', token, status: 422, code: 'cvv_unavailable' });
  expect(globexEntry).toMatchObject({ merchantId: 'globex', keyId: globexKey.id, token: globexToken });
  expect(Date.parse(acmeOk.at)).toBeGreaterThan(Date.now() - 60_000);
  expect(acmeOk.requestId).toMatch(/^req_/);

  // A merchant's operator sees that merchant only, and may not ask for another.
  const mine = await acmeOps.call('GET', '/detokenizations');
  expect(mine.body.entries.map((e: { merchantId: string }) => e.merchantId)).toEqual(['acme', 'acme']);
  expect((await acmeOps.call('GET', '/detokenizations?merchantId=globex')).status).toBe(403);

  // The stream holds identifiers only: no PAN, no CVV, no PSP path or query.
  const inspector = new Redis(env.redis.url);
  try {
    const raw = JSON.stringify(
      await Promise.all(['acme', 'globex'].map((merchant) => inspector.xrange(`tessera:detokenizations:{m:${merchant}}`, '-', '+'))),
    );
    expect(raw).toContain(token);
    expect(raw).not.toContain(TEST_CARDS.visa);
    expect(raw).not.toMatch(new RegExp(`[^\\d]${TEST_CVV}[^\\d]`));
    expect(raw).not.toContain('order=42');
    expect(raw).not.toContain('/v1/charges');
  } finally {
    inspector.disconnect();
  }
});

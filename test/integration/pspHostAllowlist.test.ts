import { loggedIn } from './adminClient';
import { aCard, apiClient, useSharedStack } from './harness';

jest.setTimeout(60_000);

const env = useSharedStack({ psp: true });
const acmeId = env.merchant('acme');
const globexId = env.merchant('globex');
const initechId = env.merchant('initech');

beforeEach(() => env.psp.reset());

const charge = (token: string, host: string) => ({
  method: 'post',
  token,
  pspUrl: `http://${host}:${env.psp.port}/v1/charges`,
  pspBody: '{"n":"[CARD_NUMBER]"}',
});

it('a PSP host allowlist set with the keys CLI refuses other hosts with 400 before any connection, and lets listed hosts through', async () => {
  const key = env.stack.createKey(acmeId);
  const acme = apiClient(env.stack, key.apiKey);
  const { token } = (await acme('POST', '/v1/token', aCard())).body;

  // Unset: any host the address policy allows (here 127.0.0.1 and localhost, by test config).
  expect((await acme('POST', '/v1/proxy', charge(token, 'localhost'))).status).toBe(200);
  expect(env.psp.connections).toBe(1);
  env.psp.reset();

  const out = env.stack.cli(['psp-hosts', 'set', '--merchant', acmeId, '127.0.0.1', '*.adyen.com', 'API.Stripe.com']);
  expect(out).toContain('127.0.0.1, *.adyen.com, api.stripe.com');
  expect(JSON.parse(env.stack.cli(['psp-hosts', 'show', '--merchant', acmeId, '--json']))).toEqual({
    merchantId: acmeId,
    pspHosts: ['127.0.0.1', '*.adyen.com', 'api.stripe.com'],
  });

  // localhost resolves to the same listener, but it is not on the list.
  const refused = await acme('POST', '/v1/proxy', charge(token, 'localhost'));
  expect(refused.status).toBe(400);
  expect(refused.headers.get('x-tessera-error')).toBe('psp_destination_forbidden');
  expect(refused.body.error).toMatchObject({ code: 'psp_destination_forbidden', param: 'pspUrl' });
  expect(refused.body.error.message).toMatch(/not on the merchant's PSP allowlist/);
  const dryRun = await acme('POST', '/v1/proxy/dry-run', charge(token, 'localhost'));
  expect(dryRun.status).toBe(200);
  expect(dryRun.body).toMatchObject({ destination: { allowed: false, code: 'psp_destination_forbidden' }, wouldSend: false });
  expect(env.psp.connections).toBe(0);

  expect((await acme('POST', '/v1/proxy', charge(token, '127.0.0.1'))).status).toBe(200);
  expect(env.psp.requests).toHaveLength(1);

  // Another merchant's traffic is not affected.
  const globex = apiClient(env.stack, env.stack.createKey(globexId).apiKey);
  const { token: globexToken } = (await globex('POST', '/v1/token', aCard())).body;
  expect((await globex('POST', '/v1/proxy', charge(globexToken, 'localhost'))).status).toBe(200);

  env.stack.cli(['psp-hosts', 'clear', '--merchant', acmeId]);
  expect((await acme('POST', '/v1/proxy', charge(token, 'localhost'))).status).toBe(200);
});

it('the admin API reads and replaces a merchant’s PSP host allowlist, scoped to the operator’s merchants and audited', async () => {
  env.stack.createOperator(`${env.merchant('ops')}@platform.test`, 'correct horse battery staple', null);
  env.stack.createOperator(`${env.merchant('ops')}@initech.test`, 'correct horse battery staple', initechId);
  const platform = await loggedIn(env.stack.adminUrl, `${env.merchant('ops')}@platform.test`, 'correct horse battery staple');
  const initechOps = await loggedIn(env.stack.adminUrl, `${env.merchant('ops')}@initech.test`, 'correct horse battery staple');

  expect((await initechOps.call('GET', `/merchants/${initechId}/psp-hosts`)).body).toMatchObject({ merchantId: initechId, pspHosts: [] });
  const set = await initechOps.call('PUT', `/merchants/${initechId}/psp-hosts`, { pspHosts: ['127.0.0.1', '*.Adyen.com'] });
  expect(set.status).toBe(200);
  expect(set.body.pspHosts).toEqual(['127.0.0.1', '*.adyen.com']);

  const invalid = await initechOps.call('PUT', `/merchants/${initechId}/psp-hosts`, { pspHosts: ['https://api.stripe.com/v1'] });
  expect(invalid.status).toBe(400);
  expect(invalid.body.error).toMatchObject({ code: 'parameter_invalid', param: 'pspHosts[0]' });
  expect((await initechOps.call('PUT', `/merchants/${initechId}/psp-hosts`, { pspHosts: [] }, { 'x-csrf-token': 'wrong' })).status).toBe(
    403,
  );
  expect((await initechOps.call('GET', `/merchants/${acmeId}/psp-hosts`)).status).toBe(403);
  expect((await initechOps.call('PUT', `/merchants/${acmeId}/psp-hosts`, { pspHosts: [] })).status).toBe(403);

  // What the admin API set is what the CLI (and the gateway) read.
  expect(JSON.parse(env.stack.cli(['psp-hosts', 'show', '--merchant', initechId, '--json'])).pspHosts).toEqual([
    '127.0.0.1',
    '*.adyen.com',
  ]);
  const initech = apiClient(env.stack, env.stack.createKey(initechId).apiKey);
  const { token } = (await initech('POST', '/v1/token', aCard())).body;
  expect((await initech('POST', '/v1/proxy', charge(token, 'localhost'))).status).toBe(400);

  const audit = await platform.call('GET', `/audit?merchantId=${initechId}`);
  const entry = audit.body.entries.find((e: { action: string }) => e.action === 'merchant.psp_hosts_updated');
  expect(entry).toMatchObject({
    actor: `${env.merchant('ops')}@initech.test`,
    merchantId: initechId,
    details: { pspHosts: ['127.0.0.1', '*.adyen.com'], previousPspHosts: [] },
  });
});

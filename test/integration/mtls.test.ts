import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { aCard, apiClient, findCardDataInLogs, ROOT, TEST_CARDS, TEST_CVV, useStack } from './harness';

jest.setTimeout(60_000);

const env = useStack({ tls: true, psp: true });

describe('the stack with mutual TLS between gateway, vault and proxy', () => {
  it('tokenizes and proxies end to end, every service reporting TLS on', async () => {
    for (const p of [env.stack.vault, env.stack.proxy]) expect(p.output).toContain('"tls":true');
    expect(env.stack.logs()).not.toContain('PLAINTEXT');
    const call = apiClient(env.stack, env.stack.createKey('acme', 'test').apiKey);
    const created = await call('POST', '/v1/token', aCard());
    expect(created.status).toBe(201);
    const res = await call('POST', '/v1/proxy', {
      method: 'post',
      token: created.body.token,
      pspUrl: `${env.psp.url}/charge`,
      pspBody: '{"n":"[CARD_NUMBER]","c":"[CARD_CVV]"}',
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(env.psp.requests[0]!.body.toString('utf8'))).toEqual({ n: TEST_CARDS.visa, c: TEST_CVV });
    expect(findCardDataInLogs(env.stack.logs(), Object.values(TEST_CARDS), [TEST_CVV])).toEqual([]);
  });
});

describe('production mode', () => {
  function startInProduction(service: 'vault' | 'proxy' | 'gateway') {
    return spawnSync(process.execPath, [path.join(ROOT, 'services', service, 'dist', 'main.js')], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 15_000,
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'production',
        // Everything else production asks for, so TLS is the only thing missing.
        VAULT_KEYS: env.stack.env.VAULT_KEYS,
        API_KEY_PEPPER: env.stack.env.API_KEY_PEPPER,
        REDIS_URL: env.redis.url,
        VAULT_ADDR: '127.0.0.1:1',
        PROXY_ADDR: '127.0.0.1:1',
      },
    });
  }

  it.each(['vault', 'proxy', 'gateway'] as const)('refuses to start the %s without TLS files', (service) => {
    const result = startInProduction(service);
    expect(result.status).toBe(78);
    expect(result.stderr).toContain('TLS_CA_FILE');
  });
});

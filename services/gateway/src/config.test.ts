import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '@tessera/common';
import { parseGatewayConfig, resolveApiKeyPepper } from './config';

function problems(env: NodeJS.ProcessEnv): string[] {
  try {
    parseGatewayConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('gateway config', () => {
  it('has working defaults for local development', () => {
    const config = parseGatewayConfig({});
    expect(config.REDIS_URL).toBeUndefined();
    expect(config).toMatchObject({
      PORT: 8080,
      HOST: '127.0.0.1',
      VAULT_ADDR: '127.0.0.1:50051',
      PROXY_ADDR: '127.0.0.1:50052',
      VAULT_TIMEOUT_MS: 2000,
      PROXY_TIMEOUT_MS: 40000,
      READY_TIMEOUT_MS: 1000,
      BODY_LIMIT_BYTES: 1048576,
      TRUSTED_PROXIES: [],
      NODE_ENV: 'development',
    });
  });

  it('takes REDIS_CLUSTER_NODES as host:port seeds, together with REDIS_URL for credentials', () => {
    const config = parseGatewayConfig({ REDIS_URL: 'redis://127.0.0.1:7000', REDIS_CLUSTER_NODES: '127.0.0.1:7000,127.0.0.1:7001' });
    expect(config.REDIS_CLUSTER_NODES).toEqual(['127.0.0.1:7000', '127.0.0.1:7001']);
    expect(problems({ REDIS_CLUSTER_NODES: '127.0.0.1:7000' })).toEqual([expect.stringMatching(/^REDIS_CLUSTER_NODES: needs REDIS_URL/)]);
    expect(problems({ REDIS_URL: 'redis://127.0.0.1:7000', REDIS_CLUSTER_NODES: 'nodeport' })).toEqual([
      'REDIS_CLUSTER_NODES: "nodeport" is not host:port',
    ]);
  });

  it('runs one gateway process by default and refuses several workers without a shared Redis', () => {
    expect(parseGatewayConfig({}).GATEWAY_WORKERS).toBe(1);
    expect(problems({ GATEWAY_WORKERS: '2' })).toEqual([expect.stringMatching(/^GATEWAY_WORKERS:.*REDIS_URL/)]);
    expect(parseGatewayConfig({ GATEWAY_WORKERS: '2', REDIS_URL: 'redis://127.0.0.1:6390' }).GATEWAY_WORKERS).toBe(2);
    expect(problems({ GATEWAY_WORKERS: '0' })).toEqual([expect.stringMatching(/^GATEWAY_WORKERS:/)]);
  });

  it('requires API_KEY_PEPPER and REDIS_URL in production and refuses TESSERA_DEV_API_KEY there', () => {
    const found = problems({ NODE_ENV: 'production', TESSERA_DEV_API_KEY: `tsk_test_${'a'.repeat(32)}` });
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^API_KEY_PEPPER:/),
        expect.stringMatching(/^REDIS_URL:/),
        expect.stringMatching(/^TESSERA_DEV_API_KEY:/),
      ]),
    );
  });

  it('rejects a short pepper, a malformed dev key and a bad trusted proxy, listing all of them', () => {
    const found = problems({ API_KEY_PEPPER: 'short', TESSERA_DEV_API_KEY: 'tsk_live_x', TRUSTED_PROXIES: '10.0.0.0/8, nope' });
    expect(found).toHaveLength(3);
    expect(found.join('\n')).not.toContain('tsk_live_x');
  });

  it('treats an empty optional variable as unset', () => {
    expect(parseGatewayConfig({ REDIS_URL: '', API_KEY_PEPPER: '' })).toMatchObject({ REDIS_URL: undefined, API_KEY_PEPPER: undefined });
  });

  it('creates a development pepper once in the state dir and reuses it', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-config-'));
    try {
      const config = parseGatewayConfig({ TESSERA_STATE_DIR: dir });
      const first = resolveApiKeyPepper(config);
      const second = resolveApiKeyPepper(config);
      expect(first).toMatchObject({ source: 'dev-file' });
      expect(first.pepper.length).toBeGreaterThanOrEqual(32);
      expect(second.pepper).toBe(first.pepper);
      expect(resolveApiKeyPepper(parseGatewayConfig({ TESSERA_STATE_DIR: dir, API_KEY_PEPPER: 'e'.repeat(32) }))).toEqual({
        pepper: 'e'.repeat(32),
        peppers: [{ version: 'default', pepper: 'e'.repeat(32) }],
        previousPeppers: [],
        source: 'env',
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes several peppers in API_KEY_PEPPERS: the newest hashes, the older ones are tried newest first', () => {
    const [v1, v2, v3] = ['1', '2', '3'].map((c) => c.repeat(32)) as [string, string, string];
    const config = parseGatewayConfig({ API_KEY_PEPPERS: `v1:${v1},v2:${v2},v3:${v3}` });
    expect(resolveApiKeyPepper(config)).toEqual({
      pepper: v3,
      peppers: [
        { version: 'v1', pepper: v1 },
        { version: 'v2', pepper: v2 },
        { version: 'v3', pepper: v3 },
      ],
      previousPeppers: [v2, v1],
      source: 'env',
    });
    expect(problems({ API_KEY_PEPPER: v1, API_KEY_PEPPERS: `v2:${v2}` })).toEqual([
      'API_KEY_PEPPERS: set API_KEY_PEPPER or API_KEY_PEPPERS, not both (list the old pepper in API_KEY_PEPPERS)',
    ]);
    expect(problems({ API_KEY_PEPPERS: 'v1:tooshort' })).toEqual([
      'API_KEY_PEPPERS: entry 1 (version "v1"): the pepper must be at least 32 characters',
    ]);
    expect(problems({ NODE_ENV: 'production', API_KEY_PEPPERS: `v1:${v1}` }).some((p) => p.startsWith('API_KEY_PEPPER'))).toBe(false);
  });
});

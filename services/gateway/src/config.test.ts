import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '@tessera/common';
import { GRPC_DEFAULTS } from '@tessera/protos';
import { parseGatewayConfig as parseEnv, resolveApiKeyPepper } from './config';

/**
 * These tests read development defaults unless they set NODE_ENV: unset means production (see the
 * last test). REDIS_URL, which the gateway always needs, is given unless a test unsets it (parsing
 * never connects).
 */
const parseGatewayConfig: typeof parseEnv = (env) => parseEnv({ NODE_ENV: 'development', REDIS_URL: 'redis://127.0.0.1:7000', ...env });

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

  it('takes VAULT_ADDR and PROXY_ADDR as gRPC targets: host:port, dns:/// (every replica) or a fixed ipv4:/ipv6: list', () => {
    for (const target of [
      'vault:50051',
      'dns:///vault-headless.tessera.svc.cluster.local:50051',
      'ipv4:127.0.0.1:50051,127.0.0.1:50061',
      'ipv6:[::1]:50051,[::1]:50061',
      '[::1]:50051',
    ]) {
      expect(parseGatewayConfig({ VAULT_ADDR: target, PROXY_ADDR: target })).toMatchObject({ VAULT_ADDR: target, PROXY_ADDR: target });
    }
    expect(problems({ VAULT_ADDR: 'ipv4:127.0.0.1:50051,vault:50061' })).toEqual(['VAULT_ADDR: "vault:50061" is not an IPv4 address:port']);
    expect(problems({ PROXY_ADDR: 'dns://8.8.8.8/proxy:50052' })).toEqual([
      expect.stringMatching(/^PROXY_ADDR: a DNS target is dns:\/\/\/host:port/),
    ]);
    expect(problems({ VAULT_ADDR: 'dns:///vault' })).toEqual(['VAULT_ADDR: dns:/// must be followed by host:port']);
    expect(problems({ VAULT_ADDR: 'vault:99999' })).toHaveLength(1);
  });

  it('keeps gRPC keepalive at or above the servers’ minimum ping interval by default', () => {
    const config = parseGatewayConfig({});
    expect(config.GRPC_KEEPALIVE_TIME_MS).toBe(GRPC_DEFAULTS.keepaliveTimeMs);
    expect(config.GRPC_KEEPALIVE_TIME_MS).toBeGreaterThanOrEqual(GRPC_DEFAULTS.minPingIntervalMs);
    expect(problems({ GRPC_KEEPALIVE_TIME_MS: '10' })).toHaveLength(1);
  });

  it('takes REDIS_CLUSTER_NODES as host:port seeds, together with REDIS_URL for credentials', () => {
    const config = parseGatewayConfig({ REDIS_URL: 'redis://127.0.0.1:7000', REDIS_CLUSTER_NODES: '127.0.0.1:7000,127.0.0.1:7001' });
    expect(config.REDIS_CLUSTER_NODES).toEqual(['127.0.0.1:7000', '127.0.0.1:7001']);
    expect(problems({ REDIS_CLUSTER_NODES: '127.0.0.1:7000', REDIS_URL: undefined })).toEqual([
      expect.stringMatching(/^REDIS_CLUSTER_NODES: needs REDIS_URL/),
    ]);
    expect(problems({ REDIS_URL: 'redis://127.0.0.1:7000', REDIS_CLUSTER_NODES: 'nodeport' })).toEqual([
      'REDIS_CLUSTER_NODES: "nodeport" is not host:port',
    ]);
  });

  it('reads IDEMPOTENCY_WRITE_ACK as VAULT_WRITE_ACK is read: none by default, a WAIT below the command timeout, with a Redis', () => {
    expect(parseGatewayConfig({}).IDEMPOTENCY_WRITE_ACK).toEqual({ kind: 'none' });
    expect(
      parseGatewayConfig({ REDIS_URL: 'redis://127.0.0.1:7000', IDEMPOTENCY_WRITE_ACK: 'replica:1:300' }).IDEMPOTENCY_WRITE_ACK,
    ).toEqual({
      kind: 'replicas',
      replicas: 1,
      timeoutMs: 300,
    });
    expect(parseGatewayConfig({ IDEMPOTENCY_WRITE_ACK: 'aof' }).IDEMPOTENCY_WRITE_ACK).toEqual({ kind: 'aof' });
    expect(problems({ IDEMPOTENCY_WRITE_ACK: 'aof', REDIS_URL: undefined })).toEqual([expect.stringMatching(/^REDIS_URL: is required/)]);
    expect(problems({ REDIS_URL: 'redis://127.0.0.1:7000', IDEMPOTENCY_WRITE_ACK: 'replica:1:1000' })).toEqual([
      'IDEMPOTENCY_WRITE_ACK: the WAIT timeout must be below REDIS_COMMAND_TIMEOUT_MS',
    ]);
    expect(problems({ REDIS_URL: 'redis://127.0.0.1:7000', IDEMPOTENCY_WRITE_ACK: 'fsync' })[0]).toMatch(
      /^IDEMPOTENCY_WRITE_ACK: must be none, aof/,
    );
  });

  it('runs one gateway process by default and refuses several workers without a shared Redis', () => {
    expect(parseGatewayConfig({}).GATEWAY_WORKERS).toBe(1);
    expect(problems({ GATEWAY_WORKERS: '2', REDIS_URL: undefined })).toEqual([expect.stringMatching(/^REDIS_URL: is required/)]);
    expect(parseGatewayConfig({ GATEWAY_WORKERS: '2', REDIS_URL: 'redis://127.0.0.1:6390' }).GATEWAY_WORKERS).toBe(2);
    expect(problems({ GATEWAY_WORKERS: '0' })).toEqual([expect.stringMatching(/^GATEWAY_WORKERS:/)]);
  });

  it('requires API_KEY_PEPPER and REDIS_URL in production and refuses TESSERA_DEV_API_KEY there', () => {
    const found = problems({ NODE_ENV: 'production', REDIS_URL: undefined, TESSERA_DEV_API_KEY: `tsk_test_${'a'.repeat(32)}` });
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^API_KEY_PEPPER:/),
        expect.stringMatching(/^REDIS_URL:/),
        expect.stringMatching(/^TESSERA_DEV_API_KEY:/),
      ]),
    );
  });

  it('keeps a CVC session within an hour', () => {
    expect(parseGatewayConfig({ CVC_SESSION_TTL_SECONDS: '3600' }).CVC_SESSION_TTL_SECONDS).toBe(3600);
    expect(problems({ CVC_SESSION_TTL_SECONDS: '86400' }).join('\n')).toMatch(/CVC_SESSION_TTL_SECONDS.*at most 3600/);
  });

  it('rejects a short pepper, a malformed dev key and a bad trusted proxy, listing all of them', () => {
    const found = problems({ API_KEY_PEPPER: 'short', TESSERA_DEV_API_KEY: 'tsk_live_x', TRUSTED_PROXIES: '10.0.0.0/8, nope' });
    expect(found).toHaveLength(3);
    expect(found.join('\n')).not.toContain('tsk_live_x');
  });

  it('opens form sessions only with FIELDS_ORIGIN, a bare origin, https in production', () => {
    expect(parseGatewayConfig({}).FIELDS_ORIGIN).toBeUndefined();
    expect(parseGatewayConfig({ FIELDS_ORIGIN: 'https://fields.tessera.example/' }).FIELDS_ORIGIN).toBe('https://fields.tessera.example');
    expect(problems({ FIELDS_ORIGIN: 'https://fields.example/path' })).toEqual([
      expect.stringMatching(/^FIELDS_ORIGIN: must be an origin/),
    ]);
    expect(problems({ NODE_ENV: 'production', FIELDS_ORIGIN: 'http://fields.example' })).toEqual(
      expect.arrayContaining([expect.stringMatching(/^FIELDS_ORIGIN: must be https/)]),
    );
  });

  it('treats an empty optional variable as unset', () => {
    expect(parseGatewayConfig({ API_KEY_PEPPER: '', IDEMPOTENCY_REDIS_URL: '' })).toMatchObject({
      API_KEY_PEPPER: undefined,
      IDEMPOTENCY_REDIS_URL: undefined,
    });
    // An empty REDIS_URL is no Redis: refused as a missing one.
    expect(problems({ REDIS_URL: '' })).toEqual([expect.stringMatching(/^REDIS_URL: is required/)]);
  });

  it.each(['development', 'test', 'production'])(
    'refuses to start without REDIS_URL when NODE_ENV=%s, saying where the gateway keeps its state',
    (nodeEnv) => {
      const found = problems({ NODE_ENV: nodeEnv, REDIS_URL: undefined, API_KEY_PEPPER: 'p'.repeat(32) });
      expect(found).toContain(
        'REDIS_URL: is required: the gateway keeps API keys, counters and idempotency records in Redis only (`npm start` runs a private redis-server and sets it)',
      );
      // No default: the local development defaults include none.
      expect(found.filter((problem) => problem.startsWith('REDIS_URL'))).toHaveLength(1);
    },
  );

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

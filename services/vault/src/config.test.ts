import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { ConfigError, grpcServerTuning, healthServiceOptions, parseConfig as parseEnv } from '@tessera/common';
import { GRPC_DEFAULTS } from '@tessera/protos';
import { configSchema, redisTargetOf } from './config';

const A_REDIS = 'redis://127.0.0.1:6380';

/**
 * These tests read development defaults with a card store's Redis unless they set NODE_ENV or
 * REDIS_URL (to undefined: unset): unset NODE_ENV means production (see the last test).
 */
const parseConfig: typeof parseEnv = (schema, env) => parseEnv(schema, { NODE_ENV: 'development', REDIS_URL: A_REDIS, ...env });
const REDIS_REQUIRED =
  'REDIS_URL: is required (or REDIS_CLUSTER_NODES): the vault keeps cards only in Redis, in every NODE_ENV; npm start runs one for development';

const key = (id: string): string => `${id}:${randomBytes(32).toString('base64')}`;

function problems(env: NodeJS.ProcessEnv): string[] {
  try {
    parseConfig(configSchema, env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('vault config', () => {
  it("has development defaults and requires nothing but the card store's Redis outside production", () => {
    const config = parseConfig(configSchema, {});
    expect(config).toMatchObject({
      VAULT_ADDR: '127.0.0.1:50051',
      CVV_TTL_SECONDS: 3600,
      CARD_GRACE_DAYS: 30,
      BROWSER_TOKEN_TTL_SECONDS: 3600,
      REDIS_COMMAND_TIMEOUT_MS: 1000,
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      TESSERA_STATE_DIR: path.resolve('.tessera/vault'),
    });
    expect(redisTargetOf(config)).toEqual({ url: A_REDIS });
    expect(config.VAULT_KEYS).toBeUndefined();
  });

  it('requires Redis in every NODE_ENV: there is no in-memory card store', () => {
    for (const NODE_ENV of ['development', 'test', 'production']) {
      expect(problems({ NODE_ENV, REDIS_URL: undefined })).toContain(REDIS_REQUIRED);
    }
    expect(problems({ REDIS_URL: undefined })).toEqual([REDIS_REQUIRED]);
    expect(parseConfig(configSchema, { REDIS_URL: undefined, REDIS_CLUSTER_NODES: '127.0.0.1:7000' }).REDIS_CLUSTER_NODES).toEqual([
      '127.0.0.1:7000',
    ]);
  });

  it('bounds gRPC connection age (clients re-resolve and find new replicas) with the shared defaults, and takes overrides', () => {
    const config = parseConfig(configSchema, {});
    expect(grpcServerTuning(config)).toEqual({
      minPingIntervalMs: GRPC_DEFAULTS.minPingIntervalMs,
      maxConnectionAgeMs: GRPC_DEFAULTS.maxConnectionAgeMs,
      maxConnectionAgeGraceMs: GRPC_DEFAULTS.maxConnectionAgeGraceMs,
    });
    expect(healthServiceOptions(config)).toEqual({ pollIntervalMs: 500, checkTimeoutMs: 500 });
    const tuned = parseConfig(configSchema, { GRPC_MAX_CONNECTION_AGE_MS: '60000', HEALTH_POLL_INTERVAL_MS: '250' });
    expect(tuned).toMatchObject({ GRPC_MAX_CONNECTION_AGE_MS: 60000, HEALTH_POLL_INTERVAL_MS: 250 });
    expect(problems({ GRPC_MAX_CONNECTION_AGE_MS: '0' })).toEqual([expect.stringMatching(/^GRPC_MAX_CONNECTION_AGE_MS: /)]);
  });

  it('parses VAULT_KEYS into a ring whose last key is current', () => {
    const config = parseConfig(configSchema, { VAULT_KEYS: `${key('old')},${key('new')}` });
    expect(config.VAULT_KEYS?.currentKeyId).toBe('new');
    expect(config.VAULT_KEYS?.keyIds).toEqual(['old', 'new']);
  });

  it('reads VAULT_WRITE_ACK and REDIS_CLUSTER_NODES, and a cluster takes precedence over REDIS_URL', () => {
    const config = parseConfig(configSchema, {
      REDIS_URL: 'redis://127.0.0.1:6380',
      REDIS_CLUSTER_NODES: '127.0.0.1:7000, 127.0.0.1:7001',
      VAULT_WRITE_ACK: 'replica:1:300',
    });
    expect(config.VAULT_WRITE_ACK).toEqual({ kind: 'replicas', replicas: 1, timeoutMs: 300 });
    expect(redisTargetOf(config)).toEqual({ clusterNodes: ['127.0.0.1:7000', '127.0.0.1:7001'], credentialsUrl: 'redis://127.0.0.1:6380' });
    expect(parseConfig(configSchema, {}).VAULT_WRITE_ACK).toEqual({ kind: 'none' });
  });

  it('refuses a write acknowledgement without Redis, a WAIT longer than the command timeout, and bad nodes', () => {
    // One problem: the missing Redis, not also the acknowledgement that needs it.
    expect(problems({ REDIS_URL: undefined, VAULT_WRITE_ACK: 'aof' })).toEqual([REDIS_REQUIRED]);
    expect(problems({ REDIS_URL: 'redis://127.0.0.1:6380', VAULT_WRITE_ACK: 'replica:1:2000' })).toEqual([
      'VAULT_WRITE_ACK: the WAIT timeout must be below REDIS_COMMAND_TIMEOUT_MS',
    ]);
    expect(problems({ REDIS_URL: 'redis://127.0.0.1:6380', VAULT_WRITE_ACK: 'fsync' })[0]).toMatch(/^VAULT_WRITE_ACK: must be none, aof/);
    expect(problems({ REDIS_CLUSTER_NODES: 'redis-a' })).toEqual(['REDIS_CLUSTER_NODES: "redis-a" is not host:port']);
  });

  it('caps rendered bodies at 2 MiB by default, and refuses a cap that a gRPC message could not carry', () => {
    expect(parseConfig(configSchema, {}).RENDER_MAX_BYTES).toBe(2 * 1024 * 1024);
    expect(parseConfig(configSchema, { RENDER_MAX_BYTES: '65536' }).RENDER_MAX_BYTES).toBe(65536);
    expect(problems({ RENDER_MAX_BYTES: String(12 * 1024 * 1024) })[0]).toMatch(/^RENDER_MAX_BYTES: must be at most \d+/);
    expect(problems({ RENDER_MAX_BYTES: '0' })[0]).toMatch(/^RENDER_MAX_BYTES: /);
  });

  const tlsFiles = { TLS_CA_FILE: '/certs/ca.crt', TLS_CERT_FILE: '/certs/vault.crt', TLS_KEY_FILE: '/certs/vault.key' };

  it('requires VAULT_KEYS, REDIS_URL and TLS in production and lists them at once', () => {
    expect(problems({ NODE_ENV: 'production', REDIS_URL: undefined })).toEqual([
      'TLS_CA_FILE: TLS_CA_FILE, TLS_CERT_FILE and TLS_KEY_FILE are required when NODE_ENV=production (mTLS between services)',
      REDIS_REQUIRED,
      'VAULT_KEYS: is required when NODE_ENV=production',
    ]);
    expect(() =>
      parseConfig(configSchema, { NODE_ENV: 'production', VAULT_KEYS: key('k1'), REDIS_URL: 'redis://127.0.0.1:6380', ...tlsFiles }),
    ).not.toThrow();
  });

  it('takes the TLS files all together or not at all, and names the service peers gateway and proxy by default', () => {
    expect(problems({ TLS_CERT_FILE: '/certs/vault.crt' })).toEqual([
      'TLS_CA_FILE: is required when TLS_CERT_FILE is set',
      'TLS_KEY_FILE: is required when TLS_CERT_FILE is set',
    ]);
    const config = parseConfig(configSchema, tlsFiles);
    expect(config).toMatchObject({ ...tlsFiles, TLS_PEER_GATEWAY: 'gateway', TLS_PEER_PROXY: 'proxy', TLS_PEER_FIELDS: 'fields' });
  });

  it('lists every bad variable together, without echoing key material', () => {
    const shortKey = randomBytes(16).toString('base64');
    const found = problems({
      NODE_ENV: 'production',
      VAULT_KEYS: `a:${shortKey}`,
      CVV_TTL_SECONDS: '0',
      LOG_LEVEL: 'loud',
      REDIS_URL: 'http://x',
    });
    expect(found.some((p) => p.startsWith('VAULT_KEYS: entry 1 (key id "a"): key must be 32 bytes'))).toBe(true);
    expect(found.some((p) => p.startsWith('CVV_TTL_SECONDS'))).toBe(true);
    expect(found.some((p) => p.startsWith('LOG_LEVEL'))).toBe(true);
    expect(found.some((p) => p.startsWith('REDIS_URL'))).toBe(true);
    expect(found.join('\n')).not.toContain(shortKey);
  });

  it('rejects duplicate key ids', () => {
    expect(problems({ VAULT_KEYS: `${key('k1')},${key('k1')}` })).toEqual(['VAULT_KEYS: entry 2: key id "k1" is listed more than once']);
  });

  describe('HSM (PKCS#11) settings', () => {
    // Any existing file stands in for the vendor's library: the config checks only that it is there.
    const moduleFile = __filename;
    const hsm = { PKCS11_MODULE: moduleFile, PKCS11_TOKEN_LABEL: 'tessera', PKCS11_PIN: '1234-secret-pin' };

    it('makes the HSM the current provider with its keys newest last, and keeps VAULT_KEYS as read-only keys', () => {
      const config = parseConfig(configSchema, {
        ...hsm,
        VAULT_KEK_PROVIDER: 'pkcs11',
        PKCS11_KEYS: 'h1:kek-2025, h2',
        VAULT_KEYS: key('e1'),
      });
      expect(config.VAULT_KEK_PROVIDER).toBe('pkcs11');
      expect(config.PKCS11).toMatchObject({
        modulePath: moduleFile,
        token: { label: 'tessera' },
        keys: [
          { keyId: 'h1', label: 'kek-2025' },
          { keyId: 'h2', label: 'h2' },
        ],
      });
      expect(config.PKCS11?.pin.reveal()).toBe('1234-secret-pin');
      expect(JSON.stringify(config)).not.toContain('1234-secret-pin');
      expect(String(config.PKCS11?.pin)).toBe('[REDACTED]');
      expect(config.VAULT_KEYS?.keyIds).toEqual(['e1']);
    });

    it('reads the PIN from a file and the token by slot id, and needs no VAULT_KEYS in production', () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vault-pin-'));
      const pinFile = path.join(dir, 'pin');
      fs.writeFileSync(pinFile, 'from-a-file\n');
      try {
        const config = parseConfig(configSchema, {
          NODE_ENV: 'production',
          REDIS_URL: 'redis://127.0.0.1:6380',
          ...tlsFiles,
          VAULT_KEK_PROVIDER: 'pkcs11',
          PKCS11_MODULE: moduleFile,
          PKCS11_SLOT: '1928374650',
          PKCS11_PIN_FILE: pinFile,
          PKCS11_KEYS: 'h1:kek',
        });
        expect(config.PKCS11?.token).toEqual({ slotId: 1928374650n });
        expect(config.PKCS11?.pin.reveal()).toBe('from-a-file');
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('names every missing or contradictory HSM setting at once, never the PIN', () => {
      expect(problems({ VAULT_KEK_PROVIDER: 'pkcs11' })).toEqual([
        'PKCS11_KEYS: is required with VAULT_KEK_PROVIDER=pkcs11: list keyId:label of the HSM keys, newest last',
        "PKCS11_MODULE: is required to use an HSM: the path of its vendor's PKCS#11 library",
        'PKCS11_TOKEN_LABEL: set exactly one of PKCS11_TOKEN_LABEL and PKCS11_SLOT to choose the token',
        'PKCS11_PIN: set exactly one of PKCS11_PIN and PKCS11_PIN_FILE (the crypto user PIN of the token)',
      ]);
      const found = problems({
        ...hsm,
        PKCS11_MODULE: '/nonexistent/libvendor.so',
        PKCS11_TOKEN_LABEL: undefined,
        PKCS11_SLOT: 'first',
        PKCS11_PIN: undefined,
        PKCS11_PIN_FILE: '/nonexistent/pin',
        PKCS11_KEYS: 'e1:kek,bad id:x,h2:kek',
        VAULT_KEYS: key('e1'),
      });
      expect(found).toEqual([
        'PKCS11_SLOT: must be a slot id (a decimal number, as pkcs11-tool -L prints it)',
        'PKCS11_PIN_FILE: cannot be read (ENOENT)',
        'PKCS11_KEYS: entry 2: key id must be 1-32 characters of A-Z a-z 0-9 _ -',
        'PKCS11_KEYS: entry 3: HSM key label "kek" is listed more than once',
        'PKCS11_MODULE: no such file: /nonexistent/libvendor.so',
      ]);
      expect(found.join('\n')).not.toContain('1234-secret-pin');
      expect(problems({ ...hsm, PKCS11_MODULE: '/nonexistent/libvendor.so', PKCS11_KEYS: 'e1:kek', VAULT_KEYS: key('e1') })).toEqual([
        'PKCS11_MODULE: no such file: /nonexistent/libvendor.so',
        'PKCS11_KEYS: key id "e1" is also in VAULT_KEYS: key ids must be unique across providers',
      ]);
    });

    it('refuses PKCS11_* settings that no HSM key uses, and keeps VAULT_KEYS current with HSM keys read-only', () => {
      expect(problems({ PKCS11_PIN: '1234-secret-pin' })).toEqual([
        'PKCS11_PIN: is set but no HSM key is: set PKCS11_KEYS (and VAULT_KEK_PROVIDER=pkcs11)',
      ]);
      const config = parseConfig(configSchema, { ...hsm, PKCS11_KEYS: 'h1:kek', VAULT_KEYS: key('e1') });
      expect(config.VAULT_KEK_PROVIDER).toBe('env');
      expect(config.PKCS11?.keys).toEqual([{ keyId: 'h1', label: 'kek' }]);
    });
  });
});

import { Writable } from 'node:stream';
import { ConfigError, configSchemaShape, createLogger, runService, type ServiceRuntime } from '@tessera/common';
import { adminConfigSchema, parseAdminConfig as parseEnv } from './config';
import { adminService } from './service';
import { useAdminRedis } from './testing/redis';

/** Development defaults unless a test sets NODE_ENV; REDIS_URL is given unless a test unsets it (parsing never connects). */
const parseAdminConfig: typeof parseEnv = (env) => parseEnv({ NODE_ENV: 'development', REDIS_URL: 'redis://127.0.0.1:7000', ...env });

function problems(env: NodeJS.ProcessEnv): string[] {
  try {
    parseAdminConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('admin config', () => {
  it('listens on 127.0.0.1:8081 by default and keeps its development state in .tessera/admin', () => {
    expect(parseAdminConfig({})).toMatchObject({ ADMIN_PORT: 8081, ADMIN_BIND: '127.0.0.1', HSTS_MAX_AGE_SECONDS: 0 });
    expect(parseAdminConfig({}).TESSERA_STATE_DIR).toMatch(/[/\\]\.tessera[/\\]admin$/);
  });

  it('has no vault or proxy address and no TLS client certificate: the admin service never calls either', () => {
    const variables = Object.keys(configSchemaShape(adminConfigSchema));
    expect(variables).toEqual(expect.arrayContaining(['REDIS_URL', 'API_KEY_PEPPER', 'ADMIN_PORT', 'ADMIN_MFA_REQUIRED']));
    for (const name of ['VAULT_ADDR', 'PROXY_ADDR', 'TLS_CERT_FILE', 'TLS_KEY_FILE', 'TLS_CA_FILE']) expect(variables).not.toContain(name);
  });

  it('keeps the sign-in lockout within PCI DSS 8.3.4 and the second factor on in production', () => {
    expect(parseAdminConfig({})).toMatchObject({
      ADMIN_LOGIN_MAX_PER_ACCOUNT: 10,
      ADMIN_LOGIN_MAX_PER_SOURCE: 5,
      ADMIN_LOGIN_LOCKOUT_SECONDS: 1800,
    });
    // Unset: required in production only (resolved by setUpAdmin).
    expect(parseAdminConfig({}).ADMIN_MFA_REQUIRED).toBeUndefined();
    expect(problems({ ADMIN_LOGIN_MAX_PER_ACCOUNT: '11' })).toEqual([expect.stringMatching(/^ADMIN_LOGIN_MAX_PER_ACCOUNT:.*at most 10/)]);
    expect(parseAdminConfig({ ADMIN_MFA_REQUIRED: 'true', ADMIN_LOGIN_LOCKOUT_SECONDS: '60' })).toMatchObject({
      ADMIN_MFA_REQUIRED: true,
      ADMIN_LOGIN_LOCKOUT_SECONDS: 60,
    });
    const found = problems({ NODE_ENV: 'production', ADMIN_MFA_REQUIRED: 'false', ADMIN_LOGIN_LOCKOUT_SECONDS: '60' });
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^ADMIN_MFA_REQUIRED:.*8\.4\.2/),
        expect.stringMatching(/^ADMIN_LOGIN_LOCKOUT_SECONDS:.*1800/),
      ]),
    );
  });

  it('requires REDIS_URL and, in production, the API-key pepper, and refuses the development operator there', () => {
    expect(problems({ REDIS_URL: undefined })).toEqual([expect.stringMatching(/^REDIS_URL: is required/)]);
    expect(problems({ NODE_ENV: 'production', TESSERA_DEV_ADMIN_PASSWORD: 'x'.repeat(12) })).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^API_KEY_PEPPER: is required in production/),
        expect.stringMatching(/^TESSERA_DEV_ADMIN_PASSWORD:/),
      ]),
    );
  });
});

describe('the admin service', () => {
  const db = useAdminRedis();

  it('starts with Redis alone (no VAULT_ADDR, no PROXY_ADDR), answers its probes and stops on SIGTERM', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = Object.assign(
      new Writable({
        write(chunk: Buffer, _enc, done) {
          for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
          done();
        },
      }),
      { flush: (cb: () => void) => cb() },
    );
    let shutdown: ((signal: NodeJS.Signals) => void) | undefined;
    let exited: (code: number) => void = () => undefined;
    const exitCode = new Promise<number>((resolve) => (exited = resolve));
    const runtime: ServiceRuntime = {
      env: { NODE_ENV: 'test', REDIS_URL: db.server.url, API_KEY_PEPPER: 'p'.repeat(32), ADMIN_PORT: '0', LOG_LEVEL: 'info' },
      onShutdownSignal: (handler) => (shutdown = handler),
      exit: exited,
      stderr: (line) => lines.push({ stderr: line }),
      createLogger: (name, level) => createLogger(name, level, sink),
      limitHeapGrowth: () => undefined,
    };
    await runService(adminService, runtime);
    const listening = lines.find((line) => line.msg === 'admin listening');
    expect(listening).toMatchObject({ url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });
    const url = listening?.url as string;
    // No keep-alive socket left for the drain to wait out.
    const get = (path: string) => fetch(`${url}${path}`, { headers: { connection: 'close' } });
    expect((await get('/healthz')).status).toBe(200);
    const ready = await get('/readyz');
    expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready', checks: { redis: 'ok' } }]);
    expect((await get('/dashboard/')).status).toBe(200);
    shutdown?.('SIGTERM');
    expect(await exitCode).toBe(0);
  }, 15_000);
});

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, ROOT, startRedis, type RedisServer } from './harness';

jest.setTimeout(180_000);

/**
 * Finding 10 of the red-team review (issue 11): defaults that must be safe for a service started
 * by hand, outside `npm start` and the test harness.
 */

let stateDir: string;
beforeAll(() => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-safe-defaults-'));
});
afterAll(() => fs.rmSync(stateDir, { recursive: true, force: true }));

/** Starts one service from dist/ with exactly `env` and waits (bounded) for it to exit. */
async function startAlone(service: 'vault' | 'proxy' | 'gateway', env: NodeJS.ProcessEnv) {
  const run = spawnSync(process.execPath, [path.join(ROOT, 'services', service, 'dist', 'main.js')], {
    cwd: ROOT,
    encoding: 'utf8',
    // A service that does start runs until killed: the timeout turns that into status null.
    timeout: 15_000,
    // A draining service may outlive SIGTERM; the bound must hold.
    killSignal: 'SIGKILL',
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TESSERA_STATE_DIR: stateDir, ...env },
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('a service started without NODE_ENV', () => {
  it.each(['vault', 'proxy', 'gateway'] as const)(
    'the %s is production: it refuses to start without mTLS instead of serving plaintext gRPC on loopback',
    async (service) => {
      const ports = { vault: await freePort(), proxy: await freePort(), gateway: await freePort() };
      const { status, output } = await startAlone(service, {
        VAULT_ADDR: `127.0.0.1:${ports.vault}`,
        PROXY_ADDR: `127.0.0.1:${ports.proxy}`,
        PORT: String(ports.gateway),
      });
      expect(status).toBe(78);
      expect(output).toContain('TLS_CA_FILE, TLS_CERT_FILE and TLS_KEY_FILE are required when NODE_ENV=production');
      expect(output).not.toContain('PLAINTEXT');
    },
  );
});

describe('the proxy in production', () => {
  it.each(['0.0.0.0/0', '::/0', '169.254.169.254/32'])(
    'exits at start-up with PSP_ALLOWED_CIDRS=%s, naming the variable and the explicit override',
    async (cidrs) => {
      const { status, output } = await startAlone('proxy', {
        NODE_ENV: 'production',
        PROXY_ADDR: `127.0.0.1:${await freePort()}`,
        TLS_CA_FILE: path.join(stateDir, 'ca.crt'),
        TLS_CERT_FILE: path.join(stateDir, 'tls.crt'),
        TLS_KEY_FILE: path.join(stateDir, 'tls.key'),
        PSP_ALLOWED_CIDRS: cidrs,
      });
      expect(status).toBe(78);
      expect(output).toMatch(/PSP_ALLOWED_CIDRS: .*refused in production .*PSP_ALLOW_PRIVATE_DESTINATIONS_I_KNOW=true/);
    },
  );
});

describe('the npm start banner', () => {
  let redis: RedisServer;
  let stack: ChildProcess | undefined;
  let output = '';

  beforeAll(async () => {
    redis = await startRedis();
  });

  afterAll(async () => {
    const pgid = stack?.pid;
    if (pgid !== undefined && stack?.exitCode === null) {
      const exited = new Promise((r) => stack!.once('exit', r));
      process.kill(-pgid, 'SIGTERM');
      await exited;
      // The services shut down after the launcher; wait until none of the group is left.
      const deadline = Date.now() + 15_000;
      const alive = () => {
        try {
          process.kill(-pgid, 0);
          return true;
        } catch {
          return false;
        }
      };
      while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      if (alive()) process.kill(-pgid, 'SIGKILL');
    }
    await redis?.stop();
  });

  it('says where the data is when REDIS_URL is set, not that it is kept in memory', async () => {
    const ports = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(ports[0]),
      SANDBOX_PSP_PORT: String(ports[1]),
      FIELDS_PORT: String(ports[2]),
      VAULT_ADDR: `127.0.0.1:${ports[3]}`,
      PROXY_ADDR: `127.0.0.1:${ports[4]}`,
      TESSERA_STATE_DIR: path.join(stateDir, 'npm-start'),
      REDIS_URL: redis.url,
      TESSERA_DEV_ADMIN_PASSWORD: randomBytes(12).toString('hex'),
    };
    stack = spawn(process.execPath, [path.join(ROOT, 'scripts', 'start.mjs')], {
      cwd: ROOT,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    stack.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    stack.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    const deadline = Date.now() + 150_000;
    while (!output.includes('Press Ctrl+C to stop.')) {
      if (stack.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not come up:\n${output.slice(-4000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(output).not.toContain('keeps data in memory');
    expect(output).toContain(`Tokens and API keys are kept in Redis (redis://127.0.0.1:${redis.port})`);
  });
});

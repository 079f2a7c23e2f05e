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

describe('a gateway started without REDIS_URL', () => {
  it('refuses to start in development too, saying that its state lives in Redis only', async () => {
    const ports = { vault: await freePort(), proxy: await freePort(), gateway: await freePort() };
    const { status, output } = await startAlone('gateway', {
      NODE_ENV: 'development',
      VAULT_ADDR: `127.0.0.1:${ports.vault}`,
      PROXY_ADDR: `127.0.0.1:${ports.proxy}`,
      PORT: String(ports.gateway),
    });
    expect(status).toBe(78);
    expect(output).toContain('REDIS_URL: is required: the gateway keeps API keys');
    expect(output).not.toContain('gateway listening');
  });
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

/**
 * The environment of each process `launcher` started, by the script it runs (vault, proxy,
 * gateway, sandbox), read from /proc as anyone on the machine with the same user could.
 */
function childEnvironments(launcher: number): Record<string, Record<string, string>> {
  const found: Record<string, Record<string, string>> = {};
  for (const pid of fs.readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    let stat: string, cmdline: string, environ: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
    } catch {
      continue; // gone meanwhile, or not ours
    }
    // Fields after the command name (in parentheses, which may hold spaces): state, then the parent's pid.
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const script = /(?:services\/(\w+)|packages\/(sandbox)-psp)\/dist\/main\.js/.exec(cmdline);
    if (parent !== launcher || script === null) continue;
    const variables = environ.split('\0').filter(Boolean);
    found[script[1] ?? script[2]!] = Object.fromEntries(variables.map((v) => [v.slice(0, v.indexOf('=')), v.slice(v.indexOf('=') + 1)]));
  }
  return found;
}

/** npm start (scripts/start.mjs) run with `env` over free ports, in its own process group; resolves once it is up. */
async function startNpmStart(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; output: () => string }> {
  const ports: number[] = [];
  // Every listener on a free port: the quick-start test's npm start may hold the defaults at the same time.
  for (let i = 0; i < 9; i++) ports.push(await freePort());
  let output = '';
  const child = spawn(process.execPath, [path.join(ROOT, 'scripts', 'start.mjs')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(ports[0]),
      SANDBOX_PSP_PORT: String(ports[1]),
      FIELDS_PORT: String(ports[2]),
      VAULT_ADDR: `127.0.0.1:${ports[3]}`,
      PROXY_ADDR: `127.0.0.1:${ports[4]}`,
      ADMIN_PORT: String(ports[5]),
      FORWARD_PROXY_PORT: String(ports[6]),
      SANDBOX_PSP_TLS_PORT: String(ports[7]),
      INBOUND_PORT: String(ports[8]),
      ...env,
    },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const deadline = Date.now() + 150_000;
  while (!output.includes('Press Ctrl+C to stop.')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not come up:\n${output.slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, output: () => output };
}

/** SIGTERM to npm start's process group; resolves once none of the group is left. */
async function stopNpmStart(child: ChildProcess | undefined): Promise<void> {
  const pgid = child?.pid;
  if (pgid === undefined || child?.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
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

describe('npm start', () => {
  let redis: RedisServer;
  let stack: ChildProcess | undefined;
  let output = '';
  const root = () => path.join(stateDir, 'npm-start');
  // Secrets for one service each, set where npm start runs, as a developer would export them.
  const secrets = {
    VAULT_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    API_KEY_PEPPER: randomBytes(32).toString('hex'),
    TESSERA_DEV_ADMIN_PASSWORD: randomBytes(12).toString('hex'),
  };
  // What an earlier npm start left in the stack's directory, beside everything else.
  const legacyFiles = {
    'vault-keys': `dev1:${randomBytes(32).toString('base64')}`,
    'api-key-pepper': randomBytes(32).toString('base64url'),
    'redis/vault-password': randomBytes(24).toString('base64url'),
    'redis/gateway-password': randomBytes(24).toString('base64url'),
    // The one file for both CLIs of earlier versions, with every service's environment.
    'stack.json': JSON.stringify({ redis: { port: 41999 }, environments: { vault: { VAULT_KEYS: 'k0:old' } } }),
  };

  beforeAll(async () => {
    redis = await startRedis();
    fs.mkdirSync(root(), { recursive: true, mode: 0o700 });
    fs.mkdirSync(path.join(root(), 'redis'), { mode: 0o700 });
    for (const [file, value] of Object.entries(legacyFiles)) fs.writeFileSync(path.join(root(), file), value + '\n', { mode: 0o600 });
    const started = await startNpmStart({ TESSERA_STATE_DIR: root(), REDIS_URL: redis.url, ...secrets });
    stack = started.child;
    output = started.output();
  });

  afterAll(async () => {
    await stopNpmStart(stack);
    await redis?.stop();
  });

  it('says where the data is when REDIS_URL is set, not that it is kept in memory', () => {
    expect(output).not.toContain('keeps data in memory');
    expect(output).toContain(`Tokens and API keys are kept in Redis (redis://127.0.0.1:${redis.port})`);
  });

  it('gives each process only its own secrets: the proxy and the sandbox PSP no Redis URL, vault key, key directory or pepper', () => {
    const envs = childEnvironments(stack!.pid!);
    expect(Object.keys(envs).sort()).toEqual(['admin', 'fields', 'gateway', 'inbound', 'proxy', 'sandbox', 'vault']);
    const vaultDir = path.join(root(), 'vault');
    const gatewayDir = path.join(root(), 'gateway');
    const adminDir = path.join(root(), 'admin');
    const fieldsDir = path.join(root(), 'fields');
    /** The variables of `name`'s environment that carry `value`, under whatever name. */
    const holding = (name: string, value: string) => Object.keys(envs[name]!).filter((v) => envs[name]![v]!.includes(value));

    // Of the stack's directory, only the sandbox PSP's test TLS files: its certificate and key, and
    // its CA for the proxy to trust (the forward proxy's PSP over HTTPS, docs/proxies.md).
    const sandboxDir = path.join(root(), 'sandbox-psp') + path.sep;
    expect(holding('proxy', root())).toEqual(['NODE_EXTRA_CA_CERTS']);
    expect(holding('sandbox', root()).sort()).toEqual(['SANDBOX_PSP_TLS_CERT_FILE', 'SANDBOX_PSP_TLS_KEY_FILE']);
    for (const [name, variable] of [
      ['proxy', 'NODE_EXTRA_CA_CERTS'],
      ['sandbox', 'SANDBOX_PSP_TLS_CERT_FILE'],
      ['sandbox', 'SANDBOX_PSP_TLS_KEY_FILE'],
    ] as const) {
      expect(envs[name]![variable]!.startsWith(sandboxDir)).toBe(true);
    }
    for (const name of ['proxy', 'sandbox']) {
      for (const value of [redis.url, secrets.VAULT_KEYS, secrets.API_KEY_PEPPER, secrets.TESSERA_DEV_ADMIN_PASSWORD]) {
        expect({ name, holding: holding(name, value) }).toEqual({ name, holding: [] });
      }
      for (const dir of ['vault', 'gateway', 'admin', 'fields', 'redis'].map((d) => path.join(root(), d))) {
        expect({ name, holding: holding(name, dir) }).toEqual({ name, holding: [] });
      }
      expect(Object.keys(envs[name]!).filter((v) => /^(REDIS_|VAULT_KEYS|API_KEY_PEPPER|TESSERA_)/.test(v))).toEqual([]);
    }
    // The vault: its keys, its Redis and its own directory; nothing of the gateway's.
    expect(envs.vault).toMatchObject({ VAULT_KEYS: secrets.VAULT_KEYS, REDIS_URL: redis.url, TESSERA_STATE_DIR: vaultDir });
    for (const value of [secrets.API_KEY_PEPPER, secrets.TESSERA_DEV_ADMIN_PASSWORD, gatewayDir]) {
      expect({ value, holding: holding('vault', value) }).toEqual({ value, holding: [] });
    }
    // The gateway: its pepper, its Redis and its own directory; never the vault's keys or where they
    // are, nor the dashboard's password.
    expect(envs.gateway).toMatchObject({ API_KEY_PEPPER: secrets.API_KEY_PEPPER, REDIS_URL: redis.url, TESSERA_STATE_DIR: gatewayDir });
    for (const value of [secrets.VAULT_KEYS, vaultDir, secrets.TESSERA_DEV_ADMIN_PASSWORD])
      expect({ value, holding: holding('gateway', value) }).toEqual({ value, holding: [] });
    // Admin: the pepper it makes keys with, its Redis, its directory and the dashboard login; no vault address.
    expect(envs.admin).toMatchObject({
      API_KEY_PEPPER: secrets.API_KEY_PEPPER,
      REDIS_URL: redis.url,
      TESSERA_STATE_DIR: adminDir,
      TESSERA_DEV_ADMIN_PASSWORD: secrets.TESSERA_DEV_ADMIN_PASSWORD,
    });
    // Fields: the pepper it looks publishable keys up with, its Redis and its directory; no dashboard login.
    expect(envs.fields).toMatchObject({ API_KEY_PEPPER: secrets.API_KEY_PEPPER, REDIS_URL: redis.url, TESSERA_STATE_DIR: fieldsDir });
    for (const name of ['admin', 'fields']) {
      for (const value of [secrets.VAULT_KEYS, vaultDir, gatewayDir])
        expect({ name, value, holding: holding(name, value) }).toEqual({ name, value, holding: [] });
    }
    expect(holding('fields', secrets.TESSERA_DEV_ADMIN_PASSWORD)).toEqual([]);
    // Inbound: its Redis and its own directory; no pepper (it reads no API key), no vault key, no dashboard login.
    expect(envs.inbound).toMatchObject({ REDIS_URL: redis.url, TESSERA_STATE_DIR: path.join(root(), 'inbound') });
    for (const value of [secrets.API_KEY_PEPPER, secrets.VAULT_KEYS, secrets.TESSERA_DEV_ADMIN_PASSWORD, vaultDir, gatewayDir])
      expect({ value, holding: holding('inbound', value) }).toEqual({ value, holding: [] });
    // Nor told where the services they never call are: admin no vault or proxy. Fields dials the
    // proxy for hosted pages' completion calls, the one RPC the proxy lets its identity make.
    expect(Object.keys(envs.admin!).filter((v) => /^(VAULT|PROXY)_ADDR$/.test(v))).toEqual([]);
    expect(Object.keys(envs.fields!).filter((v) => /^PROXY_ADDR$/.test(v))).toEqual(['PROXY_ADDR']);
  });

  it("moves an earlier stack's vault key ring and pepper into the vault's and the gateway's own directories", () => {
    expect(fs.readFileSync(path.join(root(), 'vault', 'vault-keys'), 'utf8').trim()).toBe(legacyFiles['vault-keys']);
    expect(fs.readFileSync(path.join(root(), 'gateway', 'api-key-pepper'), 'utf8').trim()).toBe(legacyFiles['api-key-pepper']);
    expect(fs.readdirSync(root()).filter((f) => f in legacyFiles)).toEqual([]);
  });

  it("moves an earlier stack's Redis passwords into each service's directory and removes its shared stack.json, keeping its Redis port", () => {
    expect(fs.readFileSync(path.join(root(), 'vault', 'redis-password'), 'utf8').trim()).toBe(legacyFiles['redis/vault-password']);
    expect(fs.readFileSync(path.join(root(), 'gateway', 'redis-password'), 'utf8').trim()).toBe(legacyFiles['redis/gateway-password']);
    expect(fs.readdirSync(path.join(root(), 'redis'))).toEqual(['port']);
    expect(fs.readFileSync(path.join(root(), 'redis', 'port'), 'utf8').trim()).toBe('41999');
    expect(fs.existsSync(path.join(root(), 'stack.json'))).toBe(false);
  });
});

describe('npm start without REDIS_URL', () => {
  let stack: ChildProcess | undefined;
  const root = () => path.join(stateDir, 'npm-start-own-redis');
  // Secrets for one service each, set where npm start runs, as a developer would export them.
  const secrets = { VAULT_KEYS: `k1:${randomBytes(32).toString('base64')}`, API_KEY_PEPPER: randomBytes(32).toString('hex') };

  beforeAll(async () => {
    stack = (await startNpmStart({ TESSERA_STATE_DIR: root(), ...secrets })).child;
  });
  afterAll(() => stopNpmStart(stack));

  /** The Redis password in the REDIS_URL npm start gave a service. */
  const redisPasswordOf = (env: Record<string, string>) => decodeURIComponent(new URL(env.REDIS_URL!).password);

  it('logs the vault, the gateway, admin, fields and inbound in to its own redis-server as their own users; the proxy and the sandbox PSP get no Redis URL', () => {
    const envs = childEnvironments(stack!.pid!);
    const users = ['vault', 'gateway', 'admin', 'fields', 'inbound'];
    const password = (user: string) => fs.readFileSync(path.join(root(), user, 'redis-password'), 'utf8').trim();
    const passwords = Object.fromEntries(users.map((user) => [user, password(user)]));
    const port = Number(fs.readFileSync(path.join(root(), 'redis', 'port'), 'utf8').trim());
    for (const user of users) expect(envs[user]!.REDIS_URL).toBe(`redis://tessera-${user}:${passwords[user]}@127.0.0.1:${port}`);
    const holding = (name: string, value: string) => Object.keys(envs[name]!).filter((v) => envs[name]![v]!.includes(value));
    for (const name of ['proxy', 'sandbox']) {
      expect(Object.keys(envs[name]!).filter((v) => v.startsWith('REDIS_'))).toEqual([]);
      for (const value of [...Object.values(passwords), `:${port}`])
        expect({ name, holding: holding(name, value) }).toEqual({ name, holding: [] });
    }
    for (const name of users) {
      for (const other of users.filter((user) => user !== name))
        expect({ name, other, holding: holding(name, passwords[other]!) }).toEqual({ name, other, holding: [] });
    }
  });

  it("keeps each service's secrets in its own directory: no other file of the stack holds its Redis password, keys or pepper", () => {
    const envs = childEnvironments(stack!.pid!);
    const vaultSecrets = [redisPasswordOf(envs.vault!), secrets.VAULT_KEYS];
    const gatewaySecrets = [redisPasswordOf(envs.gateway!), secrets.API_KEY_PEPPER];
    const files = (fs.readdirSync(root(), { recursive: true }) as string[]).filter((f) => fs.statSync(path.join(root(), f)).isFile());
    /** The files outside `dir` of the stack's directory that hold any of `values`. */
    const holdingOutside = (dir: string, values: string[]) =>
      files.filter((f) => !f.startsWith(dir + path.sep) && values.some((v) => fs.readFileSync(path.join(root(), f), 'latin1').includes(v)));
    expect(holdingOutside('vault', vaultSecrets)).toEqual([]);
    expect(holdingOutside('gateway', gatewaySecrets)).toEqual([]);
    for (const service of ['admin', 'fields']) expect(holdingOutside(service, [redisPasswordOf(envs[service]!)])).toEqual([]);
    // What the CLIs beside it read: each service's own file, reaching Redis as that service's user
    // (npm run keys is the admin service's).
    expect(fs.existsSync(path.join(root(), 'gateway', 'stack.json'))).toBe(false);
    for (const service of ['vault', 'admin']) {
      const file = path.join(root(), service, 'stack.json');
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      const { environment } = JSON.parse(fs.readFileSync(file, 'utf8')) as { environment: Record<string, string> };
      expect(environment).toEqual({
        NODE_ENV: 'development',
        REDIS_URL: envs[service]!.REDIS_URL,
        TESSERA_STATE_DIR: path.join(root(), service),
        // Public: npm run keys -- page-policy names it.
        ...(service === 'admin' ? { FIELDS_ORIGIN: envs.admin!.FIELDS_ORIGIN } : {}),
      });
    }
  });
});

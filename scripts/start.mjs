#!/usr/bin/env node
// Local one-command start: builds if needed, then runs vault, proxy, gateway, admin, fields and the
// sandbox PSP as separate processes, exactly as they run in production, and prints every origin, a
// test key and the dashboard login.
// Without REDIS_URL it runs a private redis-server first (its data in .tessera/redis, so tokens,
// keys and sessions survive a restart), and it writes a stack.json into each service's own
// directory (.tessera/admin for npm run keys, .tessera/vault for npm run vault) for its CLI to
// find this stack with no environment of its own: that service's Redis, NODE_ENV and directory.
// Each process gets only its own secrets, as in production: of this environment only the
// variables its own configuration reads (the proxy and the sandbox PSP never see REDIS_URL,
// VAULT_KEYS or API_KEY_PEPPER), and a state directory of its own (the vault's key ring and Redis
// password in .tessera/vault, the gateway's pepper and Redis password in .tessera/gateway), which
// no other process is told of.
import { spawnSync } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureTools, REDIS_SERVER } from './system-tools.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
// Where npm start runs (npm: the repository root), as the CLIs look for it (.tessera/<service>).
const stateDir = path.resolve(process.env.TESSERA_STATE_DIR ?? '.tessera');
/** Each service's own state directory: the generated secret only it may use. */
const serviceStateDir = Object.fromEntries(
  ['vault', 'gateway', 'admin', 'fields', 'inbound'].map((name) => [name, path.join(stateDir, name)]),
);
/** Without REDIS_URL (or a cluster) the stack runs its own redis-server, its data kept here. */
const ownRedisDir = process.env.REDIS_URL || process.env.REDIS_CLUSTER_NODES ? undefined : path.join(stateDir, 'redis');
/** The port npm start's own redis-server had last time (not a secret): taken again on the next start. */
const ownRedisPortFile = path.join(stateDir, 'redis', 'port');
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** The dashboard login of the local stack: a platform operator whose password is kept in the state dir. */
function devAdminPassword() {
  if (process.env.TESSERA_DEV_ADMIN_PASSWORD) return process.env.TESSERA_DEV_ADMIN_PASSWORD;
  const file = path.join(stateDir, 'dev-admin-password');
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const password = Array.from({ length: 20 }, () => BASE62[randomInt(62)]).join('');
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, password + '\n', { mode: 0o600 });
  return password;
}

function devApiKey() {
  if (process.env.TESSERA_DEV_API_KEY) return process.env.TESSERA_DEV_API_KEY;
  const file = path.join(stateDir, 'dev-api-key');
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  // The key generator the gateway checks keys with (format and checksum), from the build that has just run.
  const { generateApiKey } = require(path.join(root, 'packages/merchant-data/dist/domain/apiKeys.js'));
  const key = generateApiKey('test');
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, key + '\n', { mode: 0o600 });
  return key;
}

if (process.env.NODE_ENV === 'production') {
  console.error('npm start is the local development stack. In production run each service on its own (see docs/operations.md).');
  process.exit(2);
}

if (ownRedisDir !== undefined && !ensureTools([{ ...REDIS_SERVER, usedBy: 'npm start keeps tokens and keys in it' }], 'npm start')) {
  console.error('npm start: or give it a Redis of your own: REDIS_URL=redis://... npm start');
  process.exit(1);
}

const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

/**
 * Earlier versions kept the vault's key ring and the gateway's pepper side by side in the stack's
 * directory, which every process was told of, and both Redis passwords in .tessera/redis: each
 * moves into its service's own directory (as `name` there).
 */
function moveIntoOwnDir(file, service, name = path.basename(file)) {
  const from = path.join(stateDir, file);
  const to = path.join(serviceStateDir[service], name);
  if (!fs.existsSync(from) || fs.existsSync(to)) return;
  fs.mkdirSync(serviceStateDir[service], { recursive: true, mode: 0o700 });
  fs.renameSync(from, to);
  console.log(`Moved ${path.relative(root, from)} to ${path.relative(root, to)} (only the ${service} is told of that directory).`);
}
moveIntoOwnDir('vault-keys', 'vault');
moveIntoOwnDir('api-key-pepper', 'gateway');
moveIntoOwnDir('redis/vault-password', 'vault', 'redis-password');
moveIntoOwnDir('redis/gateway-password', 'gateway', 'redis-password');

/**
 * Earlier versions wrote every service's environment (both Redis passwords, the keys, the pepper,
 * the dashboard password) into one stack.json in the stack's directory: its Redis port is kept,
 * the file removed.
 */
function retireSharedStackFile() {
  const shared = path.join(stateDir, 'stack.json');
  if (!fs.existsSync(shared)) return;
  try {
    const port = JSON.parse(fs.readFileSync(shared, 'utf8'))?.redis?.port;
    if (Number.isInteger(port) && !fs.existsSync(ownRedisPortFile)) writeOwnRedisPort(port);
  } catch {
    // Not readable as JSON: there is no port to keep.
  }
  fs.rmSync(shared, { force: true });
}

function readOwnRedisPort() {
  try {
    const port = Number(fs.readFileSync(ownRedisPortFile, 'utf8').trim());
    return Number.isInteger(port) && port > 0 ? port : undefined;
  } catch {
    return undefined;
  }
}

function writeOwnRedisPort(port) {
  fs.mkdirSync(path.dirname(ownRedisPortFile), { recursive: true, mode: 0o700 });
  fs.writeFileSync(ownRedisPortFile, `${port}\n`, { mode: 0o600 });
}
retireSharedStackFile();

/**
 * The gateway, admin and fields all hash API keys with one pepper. Each holds its own copy in its
 * own directory (as each workload has its own Secret in production), made from the gateway's, so a
 * service and its CLI find it with nothing else. A pepper given in the environment is passed on
 * instead (each of the three reads API_KEY_PEPPER(S)).
 */
function shareDevPepper() {
  if (process.env.API_KEY_PEPPER || process.env.API_KEY_PEPPERS) return;
  const { value } = loadOrCreateDevSecret(serviceStateDir.gateway, 'api-key-pepper', () => randomBytes(32).toString('base64url'));
  for (const service of ['admin', 'fields']) loadOrCreateDevSecret(serviceStateDir[service], 'api-key-pepper', () => value);
}

// What each process's configuration reads: all of this environment it is given. The addresses
// and the gateway's port are the stack's to set (from the ports below), as before.
const { configSchemaShape } = require('@tessera/common');
const variablesOf = (file, name) =>
  Object.keys(configSchemaShape(require(path.join(root, file))[name])).filter(
    (v) => !['VAULT_ADDR', 'PROXY_ADDR', 'PORT', 'ADMIN_PORT', 'FIELDS_PORT', 'INBOUND_PORT'].includes(v),
  );
const ownVariables = {
  vault: variablesOf('services/vault/dist/config.js', 'configSchema'),
  proxy: variablesOf('services/proxy/dist/config.js', 'configSchema'),
  gateway: variablesOf('services/gateway/dist/config.js', 'gatewayConfigSchema'),
  admin: variablesOf('services/admin/dist/config.js', 'adminConfigSchema'),
  fields: variablesOf('services/fields/dist/config.js', 'fieldsConfigSchema'),
  inbound: variablesOf('services/inbound/dist/config.js', 'inboundConfigSchema'),
  sandbox: variablesOf('packages/sandbox-psp/dist/config.js', 'sandboxPspConfigSchema'),
};

const port = process.env.PORT ?? '8080';
const sandboxPort = process.env.SANDBOX_PSP_PORT ?? '8090';
// The forward proxy (docs/proxies.md) and the sandbox PSP over HTTPS, the PSP host it opens for
// outbound routes to `localhost`: the sandbox's test CA is trusted by the proxy only.
const forwardProxyPort = process.env.FORWARD_PROXY_PORT ?? '8084';
const sandboxTlsPort = process.env.SANDBOX_PSP_TLS_PORT ?? '8091';
/** The sandbox's test certificate (made with openssl once); without openssl the sandbox serves HTTP only. */
const sandboxTls = (() => {
  try {
    return require('@tessera/sandbox-psp').ensureSandboxCertificate(path.join(stateDir, 'sandbox-psp'), ['localhost']);
  } catch (err) {
    console.warn(
      `npm start: the sandbox PSP serves HTTP only (no test certificate: ${err instanceof Error ? err.message.split('\n')[0] : err}).`,
    );
    return undefined;
  }
})();
/** Where a webhook receiver on this machine may listen (http://127.0.0.1:4242/…): the proxy lets deliveries reach it. */
const DEV_WEBHOOK_RECEIVER_PORT = 4242;
// The hosted card fields and tessera.js get an origin of their own (docs/browser.md).
const fieldsPort = process.env.FIELDS_PORT ?? '8082';
// The dashboard and admin API: an origin of their own too, which never sees card data.
const adminPort = process.env.ADMIN_PORT ?? '8081';
// Merchants' inbound routes (docs/proxies.md): every path on it is a route's.
const inboundPort = process.env.INBOUND_PORT ?? '8083';
const fieldsOrigin = process.env.FIELDS_ORIGIN ?? `http://127.0.0.1:${fieldsPort}`;
const apiKey = devApiKey();
const adminEmail = process.env.TESSERA_DEV_ADMIN_EMAIL ?? 'admin@tessera.local';
const adminPassword = devAdminPassword();
const nodeEnv = process.env.NODE_ENV ?? 'development';
/** The port of a host:port address such as VAULT_ADDR (the services listen on loopback here). */
const portOf = (address, fallback) => Number((address ?? fallback).split(':').pop());

// The launcher is part of the build that has just run.
const { ownEnvironment, ServiceStack, startLocalRedis } = await import('@tessera/stack');
const { loadOrCreateDevSecret, writeLocalStackFile } = require('@tessera/common');
shareDevPepper();
let stopping = false;
const processOptions = (name) => {
  const prefix = `[${name}] `.padEnd(10);
  return {
    // Printed as it comes, not kept: the local stack may run for days.
    keepOutput: false,
    onLine: (line) => process.stdout.write(prefix + line + '\n'),
    onUnexpectedExit: (code, signal) => {
      if (stopping) return;
      console.error(`${prefix}exited (${signal ?? code}); stopping the stack.`);
      void stopAll(1);
    },
  };
};
/** Set once the services are started: until then a signal stops only what there is. */
let stack;
let ownRedisStarted;

/** The services first (they drain their requests and writes), then their Redis: it saves and exits. */
async function stopAll(code) {
  if (stopping) return;
  stopping = true;
  await stack?.stop();
  // Also when a signal came while it was starting: it is stopped once it has started.
  const redis = await ownRedisStarted?.catch(() => undefined);
  await redis?.stop();
  process.exit(code);
}

process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));

/**
 * The private redis-server, when there is no REDIS_URL: on the port it had last time (kept in
 * .tessera/redis/port), each service with its own Redis user and password (kept in that service's
 * own directory; Redis is given only their digests).
 */
async function startOwnRedis() {
  if (ownRedisDir === undefined) return undefined;
  const password = (user) =>
    loadOrCreateDevSecret(serviceStateDir[user], 'redis-password', () => randomBytes(24).toString('base64url')).value;
  const redis = await startLocalRedis({
    dir: ownRedisDir,
    passwords: {
      vault: password('vault'),
      gateway: password('gateway'),
      admin: password('admin'),
      fields: password('fields'),
      inbound: password('inbound'),
    },
    port: readOwnRedisPort(),
    process: processOptions('redis'),
  });
  writeOwnRedisPort(redis.port);
  return redis;
}
ownRedisStarted = startOwnRedis();
const ownRedis = await ownRedisStarted.catch((err) => {
  console.error(`npm start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
// A signal came meanwhile: stopAll stops that Redis and exits; nothing more is started.
if (stopping) await new Promise(() => {});
/** Each service's Redis: its own user of the private redis-server, or what this environment says. */
const redisOf = (service) => (ownRedis ? { REDIS_URL: ownRedis.users[service] } : {});

/** Each process's own settings, over what it reads of this environment. */
const ownSettings = {
  vault: { NODE_ENV: nodeEnv, TESSERA_STATE_DIR: serviceStateDir.vault, ...redisOf('vault') },
  // The sandbox PSP runs on loopback and on its own port, both of which the proxy refuses unless
  // told otherwise: exactly that address and that port are opened, the port of examples/checkout,
  // whose completion endpoint (its hosted-page payments) the proxy calls, and the port of a
  // webhook receiver on the developer's machine (docs/webhooks.md, "Delivery, retries and ordering").
  proxy: {
    NODE_ENV: nodeEnv,
    PSP_ALLOWED_CIDRS: process.env.PSP_ALLOWED_CIDRS ?? '127.0.0.1/32',
    PSP_ALLOWED_PORTS: process.env.PSP_ALLOWED_PORTS ?? `${sandboxPort},${sandboxTlsPort},3001,${DEV_WEBHOOK_RECEIVER_PORT}`,
    NODE_EXTRA_CA_CERTS: sandboxTls?.caFile,
  },
  gateway: {
    NODE_ENV: nodeEnv,
    TESSERA_STATE_DIR: serviceStateDir.gateway,
    ...redisOf('gateway'),
    // Where a form session's hosted page is (the fields service's origin).
    FIELDS_ORIGIN: fieldsOrigin,
    TESSERA_DEV_API_KEY: apiKey,
    FORWARD_PROXY_PORT: forwardProxyPort,
  },
  admin: {
    NODE_ENV: nodeEnv,
    TESSERA_STATE_DIR: serviceStateDir.admin,
    ...redisOf('admin'),
    TESSERA_DEV_ADMIN_EMAIL: adminEmail,
    TESSERA_DEV_ADMIN_PASSWORD: adminPassword,
    // The page policy it recommends names the origin of tessera.js and the card fields.
    FIELDS_ORIGIN: fieldsOrigin,
  },
  fields: { NODE_ENV: nodeEnv, TESSERA_STATE_DIR: serviceStateDir.fields, ...redisOf('fields'), FIELDS_ORIGIN: fieldsOrigin },
  inbound: { NODE_ENV: nodeEnv, TESSERA_STATE_DIR: serviceStateDir.inbound, ...redisOf('inbound') },
  sandbox: {
    SANDBOX_PSP_PORT: sandboxPort,
    SANDBOX_PSP_TLS_PORT: sandboxTls && sandboxTlsPort,
    SANDBOX_PSP_TLS_CERT_FILE: sandboxTls?.certFile,
    SANDBOX_PSP_TLS_KEY_FILE: sandboxTls?.keyFile,
  },
};
const envOf = (name) => ownEnvironment(process.env, ownVariables[name], ownSettings[name]);
stack = new ServiceStack({
  // Nothing shared: each process gets its own environment (serviceEnv).
  env: {},
  ports: {
    vault: [portOf(process.env.VAULT_ADDR, '127.0.0.1:50051')],
    proxy: [portOf(process.env.PROXY_ADDR, '127.0.0.1:50052')],
    gateway: Number(port),
    admin: Number(adminPort),
    fields: Number(fieldsPort),
    inbound: Number(inboundPort),
  },
  serviceEnv: envOf,
  processOptions,
});

/**
 * What each service's CLI reads to reach this stack (stack.json in that service's own directory):
 * of the environment given here, only its Redis, NODE_ENV and directory (writeLocalStackFile
 * keeps nothing else), so that no file outside a service's directory holds its secrets.
 */
function writeStackFiles() {
  for (const service of ['admin', 'vault']) writeLocalStackFile(serviceStateDir[service], envOf(service));
}

const base = stack.baseUrl;
async function startStack() {
  stack.spawnNode('sandbox', 'packages/sandbox-psp/dist/main.js', envOf('sandbox'));
  try {
    await stack.start();
    return true;
  } catch (err) {
    if (!stopping) console.error(`${err instanceof Error ? err.message : String(err)}`);
    return false;
  }
}

/** Where tokens and keys live: the stack's own Redis and its directory, or the Redis it was given. */
function storageLine() {
  if (ownRedis) {
    return (
      `Tokens, API keys and sessions are kept in Redis (redis://127.0.0.1:${ownRedis.port}), ` +
      `data in ${path.relative(process.cwd(), ownRedisDir) || ownRedisDir}: they survive a restart.`
    );
  }
  const url = process.env.REDIS_URL;
  let where = 'REDIS_CLUSTER_NODES';
  if (url) {
    try {
      // Scheme and host only: the URL may carry the service's Redis password.
      const parsed = new URL(url);
      where = `${parsed.protocol}//${parsed.host}`;
    } catch {
      where = 'REDIS_URL';
    }
  }
  return `Tokens and API keys are kept in Redis (${where}): they survive a restart.`;
}

if (await startStack()) {
  writeStackFiles();
  const banner = [
    '',
    'Tessera is running.',
    `  API base URL:  ${base}/v1`,
    `  Test API key:  ${apiKey}`,
    `  Dashboard:     http://127.0.0.1:${adminPort}/dashboard/  (${adminEmail} / ${adminPassword})`,
    `  Card fields:   ${fieldsOrigin}  (tessera.js: /js/v1/tessera.js; needs a publishable key, see docs/browser.md)`,
    `  Inbound routes: http://127.0.0.1:${inboundPort}  (INBOUND_PORT; apply a route first, see docs/proxies.md)`,
    `  Sandbox PSP:   http://127.0.0.1:${sandboxPort}/v1/charges${sandboxTls ? `  (over HTTPS: https://localhost:${sandboxTlsPort}/v1/charges)` : ''}`,
    `  Forward proxy: HTTPS_PROXY=http://x:${apiKey}@127.0.0.1:${forwardProxyPort}  (outbound routes, docs/proxies.md)`,
    '',
    'Try it:',
    `  curl -s ${base}/v1/token -H 'x-api-key: ${apiKey}' -H 'content-type: application/json' \\`,
    `    -d '{"number":"4242424242424242","expiryMonth":12,"expiryYear":2030,"cvv":123}'`,
    '',
    storageLine(),
    `The CLIs find this stack in stack.json of each service's directory (npm run keys: ${path.relative(process.cwd(), serviceStateDir.admin)}, npm run vault: ${path.relative(process.cwd(), serviceStateDir.vault)}).`,
    'Press Ctrl+C to stop.',
    '',
  ];
  console.log(banner.join('\n'));
} else if (!stopping) {
  console.error(`The gateway did not become ready at ${base}/readyz within 30 s; stopping.`);
  void stopAll(1);
}

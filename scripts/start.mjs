#!/usr/bin/env node
// Local one-command start: builds if needed, then runs vault, proxy, gateway and the sandbox PSP
// as separate processes, exactly as they run in production, and prints the URL and a test key.
import { spawn, spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const stateDir = path.resolve(root, process.env.TESSERA_STATE_DIR ?? '.tessera');
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
  // The gateway's own key generator (format and checksum), from the build that has just run.
  const { generateApiKey } = createRequire(import.meta.url)(path.join(root, 'services/gateway/dist/domain/apiKeys.js'));
  const key = generateApiKey('test');
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, key + '\n', { mode: 0o600 });
  return key;
}

if (process.env.NODE_ENV === 'production') {
  console.error('npm start is the local development stack. In production run each service on its own (see docs/operations.md).');
  process.exit(2);
}

const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

const port = process.env.PORT ?? '8080';
const sandboxPort = process.env.SANDBOX_PSP_PORT ?? '8090';
// The hosted card fields and tessera.js get an origin of their own (docs/browser.md).
const fieldsPort = process.env.FIELDS_PORT ?? '8082';
const apiKey = devApiKey();
const adminEmail = process.env.TESSERA_DEV_ADMIN_EMAIL ?? 'admin@tessera.local';
const adminPassword = devAdminPassword();
const shared = {
  ...process.env,
  NODE_ENV: process.env.NODE_ENV ?? 'development',
  TESSERA_STATE_DIR: stateDir,
  VAULT_ADDR: process.env.VAULT_ADDR ?? '127.0.0.1:50051',
  PROXY_ADDR: process.env.PROXY_ADDR ?? '127.0.0.1:50052',
};

const services = [
  { name: 'sandbox', entry: 'packages/sandbox-psp/dist/main.js', env: { SANDBOX_PSP_PORT: sandboxPort } },
  { name: 'vault', entry: 'services/vault/dist/main.js', env: {} },
  // The sandbox PSP runs on loopback and on its own port, both of which the proxy refuses unless
  // told otherwise: exactly that address and that port are opened.
  {
    name: 'proxy',
    entry: 'services/proxy/dist/main.js',
    env: {
      PSP_ALLOWED_CIDRS: process.env.PSP_ALLOWED_CIDRS ?? '127.0.0.1/32',
      PSP_ALLOWED_PORTS: process.env.PSP_ALLOWED_PORTS ?? sandboxPort,
    },
  },
  {
    name: 'gateway',
    entry: 'services/gateway/dist/main.js',
    env: {
      PORT: port,
      FIELDS_PORT: fieldsPort,
      TESSERA_DEV_API_KEY: apiKey,
      TESSERA_DEV_ADMIN_EMAIL: adminEmail,
      TESSERA_DEV_ADMIN_PASSWORD: adminPassword,
    },
  },
];

const children = [];
let stopping = false;

function stopAll(code) {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  setTimeout(() => process.exit(code), 1500).unref();
  Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null))).then(() => process.exit(code));
}

for (const service of services) {
  const child = spawn(process.execPath, [path.join(root, service.entry)], {
    cwd: root,
    env: { ...shared, ...service.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const prefix = `[${service.name}] `.padEnd(10);
  for (const stream of [child.stdout, child.stderr]) {
    let buffered = '';
    stream.on('data', (chunk) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) process.stdout.write(prefix + line + '\n');
    });
  }
  child.on('exit', (code, signal) => {
    if (stopping) return;
    console.error(`${prefix}exited (${signal ?? code}); stopping the stack.`);
    stopAll(1);
  });
  children.push(child);
}

process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));

const base = `http://127.0.0.1:${port}`;
const deadline = Date.now() + 30_000;
async function waitUntilReady() {
  while (Date.now() < deadline && !stopping) {
    try {
      const res = await fetch(`${base}/readyz`);
      if (res.ok) return true;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

/** Where tokens and keys live: the Redis the services were given, never a claim of memory then. */
function storageLine() {
  const url = process.env.REDIS_URL;
  if (!url && !process.env.REDIS_CLUSTER_NODES) {
    return 'The embedded store keeps data in memory: tokens are lost when you stop. Set REDIS_URL to keep them.';
  }
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

if (await waitUntilReady()) {
  const banner = [
    '',
    'Tessera is running.',
    `  API base URL:  ${base}/v1`,
    `  Test API key:  ${apiKey}`,
    `  Dashboard:     ${process.env.ADMIN_PORT ? `http://127.0.0.1:${process.env.ADMIN_PORT}` : base}/dashboard/  (${adminEmail} / ${adminPassword})`,
    `  Card fields:   ${process.env.FIELDS_ORIGIN ?? `http://127.0.0.1:${fieldsPort}`}  (tessera.js: /js/v1/tessera.js; needs a publishable key, see docs/browser.md)`,
    `  Sandbox PSP:   http://127.0.0.1:${sandboxPort}/v1/charges`,
    '',
    'Try it:',
    `  curl -s ${base}/v1/token -H 'x-api-key: ${apiKey}' -H 'content-type: application/json' \\`,
    `    -d '{"number":"4242424242424242","expiryMonth":12,"expiryYear":2030,"cvv":123}'`,
    '',
    storageLine(),
    'Press Ctrl+C to stop.',
    '',
  ];
  console.log(banner.join('\n'));
} else if (!stopping) {
  console.error(`The gateway did not become ready at ${base}/readyz within 30 s; stopping.`);
  stopAll(1);
}

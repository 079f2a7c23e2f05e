#!/usr/bin/env node
// Local one-command start: builds if needed, then runs vault, proxy, gateway and the sandbox PSP
// as separate processes, exactly as they run in production, and prints the URL and a test key.
// Each process gets only its own secrets, as in production: of this environment only the
// variables its own configuration reads (the proxy and the sandbox PSP never see REDIS_URL,
// VAULT_KEYS or API_KEY_PEPPER), and a state directory of its own (the vault's key ring in
// .tessera/vault, the gateway's pepper in .tessera/gateway), which no other process is told of.
import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const stateDir = path.resolve(root, process.env.TESSERA_STATE_DIR ?? '.tessera');
/** Each service's own state directory: the generated secret only it may use. */
const serviceStateDir = { vault: path.join(stateDir, 'vault'), gateway: path.join(stateDir, 'gateway') };
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
  const { generateApiKey } = require(path.join(root, 'services/gateway/dist/domain/apiKeys.js'));
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

/**
 * Earlier versions kept the vault's key ring and the gateway's pepper side by side in the stack's
 * directory, which every process was told of: each moves into its service's own directory.
 */
function moveIntoOwnDir(file, service) {
  const from = path.join(stateDir, file);
  const to = path.join(serviceStateDir[service], file);
  if (!fs.existsSync(from) || fs.existsSync(to)) return;
  fs.mkdirSync(serviceStateDir[service], { recursive: true, mode: 0o700 });
  fs.renameSync(from, to);
  console.log(`Moved ${path.relative(root, from)} to ${path.relative(root, to)} (only the ${service} is told of that directory).`);
}
moveIntoOwnDir('vault-keys', 'vault');
moveIntoOwnDir('api-key-pepper', 'gateway');

// What each process's configuration reads: all of this environment it is given. The addresses
// and the gateway's port are the stack's to set (from the ports below), as before.
const { configSchemaShape } = require('@tessera/common');
const variablesOf = (file, name) =>
  Object.keys(configSchemaShape(require(path.join(root, file))[name])).filter((v) => !['VAULT_ADDR', 'PROXY_ADDR', 'PORT'].includes(v));
const ownVariables = {
  vault: variablesOf('services/vault/dist/config.js', 'configSchema'),
  proxy: variablesOf('services/proxy/dist/config.js', 'configSchema'),
  gateway: variablesOf('services/gateway/dist/config.js', 'gatewayConfigSchema'),
  sandbox: variablesOf('packages/sandbox-psp/dist/config.js', 'sandboxPspConfigSchema'),
};

const port = process.env.PORT ?? '8080';
const sandboxPort = process.env.SANDBOX_PSP_PORT ?? '8090';
// The hosted card fields and tessera.js get an origin of their own (docs/browser.md).
const fieldsPort = process.env.FIELDS_PORT ?? '8082';
const apiKey = devApiKey();
const adminEmail = process.env.TESSERA_DEV_ADMIN_EMAIL ?? 'admin@tessera.local';
const adminPassword = devAdminPassword();
const nodeEnv = process.env.NODE_ENV ?? 'development';
/** The port of a host:port address such as VAULT_ADDR (the services listen on loopback here). */
const portOf = (address, fallback) => Number((address ?? fallback).split(':').pop());

// The launcher is part of the build that has just run.
const { ownEnvironment, ServiceStack } = await import('@tessera/stack');
let stopping = false;
/** Each process's own settings, over what it reads of this environment. */
const ownSettings = {
  vault: { NODE_ENV: nodeEnv, TESSERA_STATE_DIR: serviceStateDir.vault },
  // The sandbox PSP runs on loopback and on its own port, both of which the proxy refuses unless
  // told otherwise: exactly that address and that port are opened.
  proxy: {
    NODE_ENV: nodeEnv,
    PSP_ALLOWED_CIDRS: process.env.PSP_ALLOWED_CIDRS ?? '127.0.0.1/32',
    PSP_ALLOWED_PORTS: process.env.PSP_ALLOWED_PORTS ?? sandboxPort,
  },
  gateway: {
    NODE_ENV: nodeEnv,
    TESSERA_STATE_DIR: serviceStateDir.gateway,
    FIELDS_PORT: fieldsPort,
    TESSERA_DEV_API_KEY: apiKey,
    TESSERA_DEV_ADMIN_EMAIL: adminEmail,
    TESSERA_DEV_ADMIN_PASSWORD: adminPassword,
  },
  sandbox: { SANDBOX_PSP_PORT: sandboxPort },
};
const envOf = (name) => ownEnvironment(process.env, ownVariables[name], ownSettings[name]);
const stack = new ServiceStack({
  // Nothing shared: each process gets its own environment (serviceEnv).
  env: {},
  // Without REDIS_URL each service keeps its data in memory (the embedded store; see storageLine()).
  ports: {
    vault: [portOf(process.env.VAULT_ADDR, '127.0.0.1:50051')],
    proxy: [portOf(process.env.PROXY_ADDR, '127.0.0.1:50052')],
    gateway: Number(port),
  },
  serviceEnv: envOf,
  processOptions: (name) => {
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
  },
});

async function stopAll(code) {
  if (stopping) return;
  stopping = true;
  await stack.stop();
  process.exit(code);
}

process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));

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

if (await startStack()) {
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
  void stopAll(1);
}

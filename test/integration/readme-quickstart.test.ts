import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort, ROOT } from './harness';

jest.setTimeout(180_000);

/**
 * The README's quick start, walked literally: the `sh` blocks of the "Quick start" section are
 * read from README.md, `npm start` runs as a real child process, and every other command runs
 * with bash exactly as written. Only the default ports 8080 (gateway) and 8090 (sandbox PSP)
 * are rewritten to free ones, so the test cannot collide with anything on the machine.
 *
 * `npm install` is the one command not run: the test suite runs inside an installed checkout
 * and must not touch the network.
 */

interface QuickStart {
  /** The commands of the first block (npm install, npm start). */
  setup: string[];
  /** The blocks after it, each a bash script. */
  scripts: string[];
}

export function extractQuickStart(readme: string): QuickStart {
  const section = /^## Quick start\n([\s\S]*?)(?=^## )/m.exec(readme)?.[1];
  if (!section) throw new Error('README.md has no "## Quick start" section');
  const blocks = [...section.matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```/gm)].map((m) => m[1]!);
  const [first, ...rest] = blocks;
  if (!first || rest.length === 0) throw new Error('the quick start needs a setup block and at least one block of commands');
  const setup = first
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  return { setup, scripts: rest };
}

function rewritePorts(script: string, gatewayPort: number, sandboxPort: number): string {
  return script.replace(/127\.0\.0\.1:8080\b/g, `127.0.0.1:${gatewayPort}`).replace(/127\.0\.0\.1:8090\b/g, `127.0.0.1:${sandboxPort}`);
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const quickStart = extractQuickStart(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'));

let workDir: string;
let stack: ChildProcess | undefined;
let stackOutput = '';
let stackExited: Promise<void> = Promise.resolve();
let ports: { gateway: number; sandbox: number; vault: number; proxy: number; fields: number };

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * npm start runs as the leader of its own process group: the signal reaches npm, the launcher
 * and every service. Done only when no process of the group is left (npm itself exits first,
 * while the services are still shutting down gracefully).
 */
async function stopStack(): Promise<void> {
  const pgid = stack?.pid;
  if (pgid === undefined || !groupAlive(pgid)) return;
  process.kill(-pgid, 'SIGTERM');
  const deadline = Date.now() + 15_000;
  while (groupAlive(pgid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (groupAlive(pgid)) process.kill(-pgid, 'SIGKILL');
  await stackExited;
}

beforeAll(async () => {
  expect(quickStart.setup).toEqual(['npm install', 'npm start']);
  // The commands read .tessera/dev-api-key relative to where they run, as in a fresh clone.
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-quickstart-'));
  ports = {
    gateway: await freePort(),
    sandbox: await freePort(),
    vault: await freePort(),
    proxy: await freePort(),
    fields: await freePort(),
  };
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PORT: String(ports.gateway),
    SANDBOX_PSP_PORT: String(ports.sandbox),
    FIELDS_PORT: String(ports.fields),
    VAULT_ADDR: `127.0.0.1:${ports.vault}`,
    PROXY_ADDR: `127.0.0.1:${ports.proxy}`,
    TESSERA_STATE_DIR: path.join(workDir, '.tessera'),
  };
  stack = spawn('npm', ['start'], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  stackExited = new Promise((resolve) => stack!.once('exit', () => resolve()));
  stack.stdout!.on('data', (c: Buffer) => (stackOutput += c.toString()));
  stack.stderr!.on('data', (c: Buffer) => (stackOutput += c.toString()));
  const deadline = Date.now() + 120_000;
  while (!stackOutput.includes('Tessera is running.')) {
    if (stack.exitCode !== null || Date.now() > deadline) {
      throw new Error(`npm start did not come up:\n${stackOutput.slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
});

afterAll(async () => {
  await stopStack();
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
});

describe('README quick start', () => {
  it('prints the base URL, the test key and the sandbox PSP as the README shows', () => {
    expect(stackOutput).toContain(`API base URL:  http://127.0.0.1:${ports.gateway}/v1`);
    expect(stackOutput).toMatch(/Test API key: {2}tsk_test_\w+/);
    expect(stackOutput).toContain(`Sandbox PSP:   http://127.0.0.1:${ports.sandbox}/v1/charges`);
  });

  it('runs every command of the quick start successfully: tokenize, approved charge, declined 402', () => {
    const output = quickStart.scripts
      .map((script) => {
        const run = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', rewritePorts(script, ports.gateway, ports.sandbox)], {
          cwd: workDir,
          env: { PATH: process.env.PATH, HOME: process.env.HOME },
          encoding: 'utf8',
          timeout: 60_000,
        });
        if (run.status !== 0) throw new Error(`quick start command failed (${run.status}):\n${run.stderr}\n${run.stdout}`);
        return run.stdout;
      })
      .join('\n');

    // 1. tokenize: the token record and HTTP 201.
    expect(output).toMatch(/"token":"tok\.[\w-]+","last4":"4242","brand":"visa"[^\n]*\nHTTP 201$/m);
    // 2. the approved charge, as the sandbox PSP answers it.
    expect(output).toMatch(/"object":"charge","status":"succeeded"/);
    // 3. the declined card: the PSP's 402 and body, passed through.
    expect(output).toContain('"code":"card_declined"');
    expect(output).toMatch(/^HTTP 402$/m);
    // No step printed an error made by Tessera.
    expect(output).not.toContain('"requestId"');
  });

  it('stops every process it started', async () => {
    await stopStack();
    expect(groupAlive(stack!.pid!)).toBe(false);
    for (const port of [ports.gateway, ports.sandbox, ports.vault, ports.proxy]) {
      expect(await portOpen(port)).toBe(false);
    }
  });
});

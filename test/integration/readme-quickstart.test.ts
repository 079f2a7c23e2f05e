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
 * are rewritten to free ones, so the test cannot collide with anything on the machine. Then every
 * CLI command of the README and the docs runs as written beside it, with no environment of its
 * own; and npm start is stopped and started again, and what was made before is still there.
 *
 * It runs in a checkout of its own (a temporary directory linking the repository's code), so the
 * stack's `.tessera` directory is created there, as in a fresh clone, never in the repository.
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

/** Documented CLI commands that name a placeholder (`<id>`, `test|live`, `[--json]`): shown as syntax, not run. */
const PLACEHOLDER = /<[^>]+>|\|live|\[--/;

/**
 * Every `npm run keys` / `npm run webhooks` / `npm run vault` command of a Markdown file: the lines of its shell blocks
 * that run one, and the inline code spans that are one (joined where the text wraps them).
 */
export function documentedCliCommands(markdown: string): string[] {
  const commands: string[] = [];
  for (const [, block] of markdown.matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```/gm)) {
    for (const line of block!.split('\n')) if (/\bnpm run (?:keys|webhooks|routes|vault) --/.test(line)) commands.push(line.trim());
  }
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const [, span] of prose.matchAll(/`([^`]+)`/g)) {
    const command = span!.replace(/\s+/g, ' ').trim();
    if (/^npm run (?:keys|webhooks|routes|vault) --/.test(command)) commands.push(command);
  }
  return commands;
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
let ports: {
  gateway: number;
  sandbox: number;
  vault: number;
  proxy: number;
  fields: number;
  admin: number;
  forwardProxy: number;
  sandboxTls: number;
  inbound: number;
  merchant: number;
};
/** What the quick start tokenized, read again after a restart. */
let quickStartToken: string;
/** Set while the test stops npm start itself, so that only an exit of its own is reported. */
let stopping = false;

/** A checkout to run in: the repository's code, linked, and a directory of its own for `.tessera`. */
function makeCheckout(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-quickstart-'));
  for (const entry of ['package.json', 'node_modules', 'packages', 'services', 'scripts', 'examples']) {
    fs.symlinkSync(path.join(ROOT, entry), path.join(dir, entry));
  }
  return dir;
}

/** A command as a developer types it in the checkout: bash, no environment beyond PATH and HOME (and `extra`). */
function runInCheckout(command: string, extra: NodeJS.ProcessEnv = {}): string {
  const run = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', command], {
    cwd: workDir,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...extra },
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (run.status !== 0) throw new Error(`command failed (${run.status}): ${command}\n${run.stderr}\n${run.stdout}`);
  return run.stdout;
}

/** npm start in the checkout, as the README runs it; resolves once it printed its banner. */
async function startStack(): Promise<void> {
  stackOutput = '';
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PORT: String(ports.gateway),
    SANDBOX_PSP_PORT: String(ports.sandbox),
    FIELDS_PORT: String(ports.fields),
    // Every listener on a free port: another test's npm start may hold the defaults.
    ADMIN_PORT: String(ports.admin),
    INBOUND_PORT: String(ports.inbound),
    // npm start's own list, plus the port the inbound how-to's stand-in merchant server runs on here.
    PSP_ALLOWED_PORTS: `${ports.sandbox},${ports.sandboxTls},3001,4242,${ports.merchant}`,
    VAULT_ADDR: `127.0.0.1:${ports.vault}`,
    PROXY_ADDR: `127.0.0.1:${ports.proxy}`,
    FORWARD_PROXY_PORT: String(ports.forwardProxy),
    SANDBOX_PSP_TLS_PORT: String(ports.sandboxTls),
  };
  stopping = false;
  stack = spawn('npm', ['start'], { cwd: workDir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  stackExited = new Promise((resolve) =>
    stack!.once('exit', (code) => {
      // A stack that dies under the tests fails them with connection errors; its own words say why.
      if (!stopping) console.error(`npm start exited (${code}) while the tests ran:\n${stackOutput.slice(-4000)}`);
      resolve();
    }),
  );
  stack.stdout!.on('data', (c: Buffer) => (stackOutput += c.toString()));
  stack.stderr!.on('data', (c: Buffer) => (stackOutput += c.toString()));
  const deadline = Date.now() + 120_000;
  while (!stackOutput.includes('Tessera is running.')) {
    if (stack.exitCode !== null || Date.now() > deadline) {
      throw new Error(`npm start did not come up:\n${stackOutput.slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The port of npm start's own redis-server, as it keeps it for its next start. */
function ownRedisPort(): number {
  return Number(fs.readFileSync(path.join(workDir, '.tessera', 'redis', 'port'), 'utf8').trim());
}

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
  stopping = true;
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
  workDir = makeCheckout();
  ports = {
    gateway: await freePort(),
    sandbox: await freePort(),
    vault: await freePort(),
    proxy: await freePort(),
    fields: await freePort(),
    admin: await freePort(),
    forwardProxy: await freePort(),
    sandboxTls: await freePort(),
    inbound: await freePort(),
    merchant: await freePort(),
  };
  await startStack();
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

  it('keeps its data in a redis-server of its own under .tessera/redis, and says so', () => {
    expect(stackOutput).not.toContain('in memory');
    expect(stackOutput).toContain(`kept in Redis (redis://127.0.0.1:${ownRedisPort()}), data in .tessera/redis: they survive a restart.`);
    expect(fs.readdirSync(path.join(workDir, '.tessera', 'redis'))).toContain('appendonlydir');
  });

  it('runs every command of the quick start successfully: tokenize, approved charge, declined 402', () => {
    const output = quickStart.scripts.map((script) => runInCheckout(rewritePorts(script, ports.gateway, ports.sandbox))).join('\n');
    quickStartToken = /"token":"(tok\.[\w-]+)"/.exec(output)![1]!;

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

  it('runs every CLI command of the README and the docs as written, beside it, with no environment of their own', () => {
    const files = ['README.md', 'docs/api.md', 'docs/browser.md', 'docs/dashboard.md', 'docs/webhooks.md', 'docs/routes.md'];
    const commands = files.flatMap((file) => documentedCliCommands(fs.readFileSync(path.join(ROOT, file), 'utf8')));
    const shown = commands.filter((command) => PLACEHOLDER.test(command));
    expect(shown).toEqual([
      'npm run keys -- restrict <key id> --origin https://shop.example',
      'npm run keys -- return-urls secret --merchant <id> --mode test|live',
      'npm run keys -- return-urls set --merchant <id> <url>...',
      'npm run keys -- revoke <old key id>',
      'npm run keys -- revoke <old key id> --after 24h',
      'npm run webhooks -- resend --merchant <id> --mode test|live --endpoint <we_id> --event <evt_id>',
    ]);
    // The passwords the operator examples pipe in.
    const passwords = { OPS_PASSWORD: 'correct horse battery staple', NEW_PASSWORD: 'another long passphrase' };
    // `key_…` names the key made last (and once revoked, the one before it); `we_…` the webhook endpoint made last.
    const keyIds: string[] = [];
    let endpointId = 'we_none';
    const ran: string[] = [];
    for (const command of commands.filter((c) => !PLACEHOLDER.test(c))) {
      const output = runInCheckout(
        command.replace(/key_(?:OLD)?…/g, () => keyIds[keyIds.length - 1] ?? 'key_none').replace(/we_…/g, () => endpointId),
        passwords,
      );
      if (/^npm run webhooks -- create /.test(command)) endpointId = /we_[A-Za-z0-9_-]{32}/.exec(output)![0];
      else if (/ -- create /.test(command)) keyIds.push(/key_[A-Za-z0-9]{20}/.exec(output)![0]);
      if (/ -- revoke key_/.test(command)) keyIds.pop();
      ran.push(command);
    }
    expect(ran).toEqual(
      expect.arrayContaining([
        'npm run keys -- create --kind publishable --merchant dev --mode test --origin http://localhost:3000',
        'npm run keys -- return-urls set --merchant dev https://shop.example/checkout/done https://shop.example/checkout/cancel',
        'npm run keys -- return-urls secret --merchant dev --mode test',
        'npm run keys -- admin list',
        'npm run webhooks -- rotate-secret --merchant dev --mode test --endpoint we_… --expires-in 1h',
        'npm run webhooks -- deliveries --merchant dev --mode test --endpoint we_…',
        'npm run webhooks -- delete --merchant dev --mode test --endpoint we_…',
        'npm run routes -- apply --merchant dev --file examples/routes/routes.yaml        # validates, shows the changes, applies',
        'npm run routes -- dry-run --merchant dev --route inbound-checkout --file examples/routes/sample.json',
        'npm run routes -- delete --merchant dev --route stripe',
      ]),
    );
    // What they made is in the running stack's store: the gateway's own CLI sees it.
    expect(runInCheckout('npm run keys --silent -- admin list')).toContain('ops@acme.example');
  });

  it('runs the forward proxy how-to of docs/proxies.md as written: the sandbox charged over HTTPS with an alias, a host on no route refused', () => {
    const proxies = fs.readFileSync(path.join(ROOT, 'docs', 'proxies.md'), 'utf8');
    const section = proxies.split('## Forward proxy (outbound routes)')[1]!.split(/\n## /)[0]!;
    const script = /### Five minutes with `npm start`[\s\S]*?```sh\n([\s\S]*?)```/.exec(section)![1]!;
    const output = runInCheckout(
      script
        .replace(/127\.0\.0\.1:8080\b/g, `127.0.0.1:${ports.gateway}`)
        .replace(/127\.0\.0\.1:8084\b/g, `127.0.0.1:${ports.forwardProxy}`)
        .replace(/localhost:8091\b/g, `localhost:${ports.sandboxTls}`),
    );
    expect(stackOutput).toMatch(new RegExp(`Forward proxy: HTTPS_PROXY=http://x:tsk_test_\\w+@127\\.0\\.0\\.1:${ports.forwardProxy}`));
    // The alias the shell held, the charge the sandbox approved (it approves published test cards only), the 403.
    expect(output).toMatch(/^424242\d{6}4242$/m);
    expect(output).toMatch(/"object":"charge","status":"succeeded".*"card":\{"brand":"visa","last4":"4242"\}/);
    expect(output).toMatch(/^403$/m);
    expect(output).not.toContain('4242424242424242');
  });

  it('runs the inbound routes how-to of docs/proxies.md as written: the stand-in server gets aliases, never the card', async () => {
    expect(stackOutput).toContain(`Inbound routes: http://127.0.0.1:${ports.inbound}`);
    const section =
      /^## Inbound routes\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(fs.readFileSync(path.join(ROOT, 'docs', 'proxies.md'), 'utf8'))?.[1] ?? '';
    const blocks = [...section.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((m) => m[1]!);
    const [server, ...steps] = blocks;
    expect(server?.trim()).toBe('node examples/inbound/merchant-server.mjs');
    expect(steps.length).toBeGreaterThanOrEqual(2);
    const merchant = spawn('node', ['examples/inbound/merchant-server.mjs'], {
      cwd: workDir,
      env: { PATH: process.env.PATH, PORT: String(ports.merchant) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let received = '';
    merchant.stdout!.on('data', (c: Buffer) => (received += c.toString()));
    try {
      while (!received.includes('listening')) await new Promise((r) => setTimeout(r, 50));
      const output = steps
        .map((step) =>
          runInCheckout(
            step
              .replace(/127\.0\.0\.1:8083\b/g, `127.0.0.1:${ports.inbound}`)
              .replace(/127\.0\.0\.1:4242\b/g, `127.0.0.1:${ports.merchant}`),
          ),
        )
        .join('\n');
      expect(output).toContain('created shop');
      const answers = output
        .split('\n')
        .filter((line) => line.startsWith('{"received"'))
        .map((line) => (JSON.parse(line) as { received: { path: string; body: string } }).received);
      expect(answers.map((a) => a.path)).toEqual(['/orders/new', '/orders/new']);
      expect(JSON.parse(answers[0]!.body)).toMatchObject({
        card: { number: expect.stringMatching(/^424242\d{6}4242$/), cvc: expect.stringMatching(/^tok\./) },
      });
      expect(new URLSearchParams(answers[1]!.body).get('card[number]')).toMatch(/^424242\d{6}4242$/);
      expect(received).not.toMatch(/4242424242424242|4242 4242 4242 4242|4242\+4242/);
    } finally {
      merchant.kill();
    }
  });

  it('runs the import how-to of docs/migration.md as written: the sample card imported, the report decrypted by the merchant', () => {
    const section =
      /^## Importing cards\n([\s\S]*?)(?=^## )/m.exec(fs.readFileSync(path.join(ROOT, 'docs', 'migration.md'), 'utf8'))?.[1] ?? '';
    const blocks = [...section.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((m) => m[1]!);
    expect(blocks.length).toBeGreaterThanOrEqual(4);
    // The merchant's own OpenPGP key, which the how-to takes as given, in a keyring of the test's own.
    const gnupgHome = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-gnupg-'));
    const gpg = { GNUPGHOME: gnupgHome };
    try {
      runInCheckout(`gpg --batch --passphrase '' --quick-gen-key billing@shop.example default default never`, gpg);
      let importId: string | undefined;
      for (const block of blocks) {
        const output = runInCheckout(importId === undefined ? block : block.replace(/imp_…/g, importId), gpg);
        importId ??= /imp_[A-Za-z0-9_-]{22}/.exec(output)?.[0];
      }
      expect(importId).toBeDefined();
      const report = fs.readFileSync(path.join(workDir, 'report.csv'), 'utf8');
      // `duplicate` when the quick start above already stored the card for dev: the one token it has.
      expect(report).toMatch(/^1,old_1,(imported|duplicate),tok\.[\w-]+,/m);
      expect(report).not.toContain('4242424242424242');
    } finally {
      // gpg starts an agent for the keyring; it would outlive the test.
      spawnSync('gpgconf', ['--kill', 'all'], { env: { PATH: process.env.PATH, GNUPGHOME: gnupgHome } });
      fs.rmSync(gnupgHome, { recursive: true, force: true });
    }
  });

  it('stops every process it started, its redis-server too', async () => {
    const redisPort = ownRedisPort();
    await stopStack();
    expect(groupAlive(stack!.pid!)).toBe(false);
    for (const port of [ports.gateway, ports.sandbox, ports.vault, ports.proxy, ports.inbound, redisPort]) {
      expect({ port, open: await portOpen(port) }).toEqual({ port, open: false });
    }
  });

  it('keeps tokens, keys and operators across a restart: the token made before reads back', async () => {
    const redisPort = ownRedisPort();
    await startStack();
    expect(ownRedisPort()).toBe(redisPort);
    const key = fs.readFileSync(path.join(workDir, '.tessera', 'dev-api-key'), 'utf8').trim();
    const read = runInCheckout(
      `curl -s -w '\\nHTTP %{http_code}\\n' http://127.0.0.1:${ports.gateway}/v1/token/${quickStartToken} -H "x-api-key: ${key}"`,
    );
    expect(read).toMatch(new RegExp(`"token":"${quickStartToken.replace(/\./g, '\\.')}","last4":"4242"[^\\n]*\\nHTTP 200`));
    expect(runInCheckout('npm run keys --silent -- list --merchant acme')).toContain('acme');
    expect(runInCheckout('npm run keys --silent -- admin list')).toContain('ops@acme.example');
    await stopStack();
  });
});

// The system programs Tessera drives for real (a Redis server, a browser, an HSM), and how a fresh machine gets them: as
// root, what is missing is installed from Debian's packages; otherwise what is missing is named with the one command that
// provides it. `npm test` (test-tools.mjs) and `npm start` (start.mjs: redis-server only) both go through here.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

export const REDIS_SERVER = { program: 'redis-server', debianPackage: 'redis-server', usedBy: 'every test that needs a store' };

export const TEST_TOOLS = [
  REDIS_SERVER,
  { program: '/usr/bin/chromium', debianPackage: 'chromium', usedBy: 'the browser tests (playwright-core)' },
  { program: 'softhsm2-util', debianPackage: 'softhsm2', usedBy: 'the HSM (PKCS#11) key provider tests' },
  // The docs' how-tos run as written: curl through the forward proxy, openssl for the sandbox PSP's and the
  // bench PSP's test certificates, gpg for the card import's files and reports (docs/proxies.md, docs/migration.md).
  { program: 'curl', debianPackage: 'curl', usedBy: 'the docs how-tos and the forward proxy tests' },
  { program: 'openssl', debianPackage: 'openssl', usedBy: "the sandbox PSP's test certificate" },
  { program: 'gpg', debianPackage: 'gnupg', usedBy: 'the card import how-to (docs/migration.md)' },
];

function isInstalled(program) {
  if (program.startsWith('/')) return fs.existsSync(program);
  return spawnSync('sh', ['-c', `command -v ${program}`], { stdio: 'ignore' }).status === 0;
}

/**
 * True when every tool is there (installed now if need be); false when one is missing, after
 * saying so on stderr, each line prefixed with `label`.
 */
export function ensureTools(tools, label) {
  const missing = tools.filter((tool) => !isInstalled(tool.program));
  if (missing.length === 0) return true;

  const packages = missing.map((tool) => tool.debianPackage);
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const hasApt = spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0;
  if (!isRoot || !hasApt) {
    for (const tool of missing) console.error(`${label}: ${tool.program} is missing (${tool.usedBy}).`);
    console.error(`${label}: install it with: sudo apt-get install -y ${packages.join(' ')}`);
    return false;
  }

  console.error(`${label}: installing ${packages.join(', ')} from Debian's packages (once per machine)...`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', ...packages],
  ]) {
    const run = spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env });
    if (run.status !== 0) {
      console.error(`${label}: apt-get ${args[0]} failed (exit ${run.status}); install by hand: apt-get install -y ${packages.join(' ')}`);
      return false;
    }
  }
  const stillMissing = tools.filter((tool) => !isInstalled(tool.program));
  if (stillMissing.length > 0) {
    console.error(`${label}: still missing after install: ${stillMissing.map((tool) => tool.program).join(', ')}`);
    return false;
  }
  return true;
}

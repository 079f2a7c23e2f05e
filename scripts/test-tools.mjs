#!/usr/bin/env node
// The system programs the test suite drives for real (a Redis server, a browser, an HSM). `npm test` runs this first so a
// fresh machine needs no step beyond the README's two commands: as root it installs what is missing from Debian's
// packages; otherwise it names what is missing and the one command that provides it, and the suite does not start
// (no browser test is ever skipped silently).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

const TOOLS = [
  { program: 'redis-server', debianPackage: 'redis-server', usedBy: 'every test that needs a store' },
  { program: '/usr/bin/chromium', debianPackage: 'chromium', usedBy: 'the browser tests (playwright-core)' },
  { program: 'softhsm2-util', debianPackage: 'softhsm2', usedBy: 'the HSM (PKCS#11) key provider tests' },
];

function isInstalled(program) {
  if (program.startsWith('/')) return fs.existsSync(program);
  return spawnSync('sh', ['-c', `command -v ${program}`], { stdio: 'ignore' }).status === 0;
}

const missing = TOOLS.filter((tool) => !isInstalled(tool.program));
if (missing.length === 0) process.exit(0);

const packages = missing.map((tool) => tool.debianPackage);
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const hasApt = spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0;
if (!isRoot || !hasApt) {
  for (const tool of missing) console.error(`test-tools: ${tool.program} is missing (${tool.usedBy}).`);
  console.error(`test-tools: install it with: sudo apt-get install -y ${packages.join(' ')}`);
  process.exit(1);
}

console.error(`test-tools: installing ${packages.join(', ')} from Debian's packages (once per machine)...`);
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
for (const args of [
  ['update', '-qq'],
  ['install', '-y', '-qq', ...packages],
]) {
  const run = spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env });
  if (run.status !== 0) {
    console.error(`test-tools: apt-get ${args[0]} failed (exit ${run.status}); install by hand: apt-get install -y ${packages.join(' ')}`);
    process.exit(1);
  }
}
const stillMissing = TOOLS.filter((tool) => !isInstalled(tool.program));
if (stillMissing.length > 0) {
  console.error(`test-tools: still missing after install: ${stillMissing.map((tool) => tool.program).join(', ')}`);
  process.exit(1);
}

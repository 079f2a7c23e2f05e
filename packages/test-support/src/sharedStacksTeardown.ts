/**
 * The integration project's globalTeardown: stops every shared stack (sharedStack.ts) the workers
 * started, keeps their logs in test-artifacts/logs for a human to read, and removes their data.
 * Node's modules only, as sharedStacksSetup.ts.
 */
import fs from 'node:fs';
import path from 'node:path';

const ARTIFACTS = path.resolve(__dirname, '../../../test-artifacts/logs');

function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    return /^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

/** SIGTERM (the services' graceful stop), SIGKILL to whatever still runs after five seconds. */
async function stopAll(pids: number[]): Promise<void> {
  for (const pid of pids) signal(pid, 'SIGTERM');
  const deadline = Date.now() + 5_000;
  while (pids.some((pid) => !gone(pid)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  for (const pid of pids.filter((p) => !gone(p))) signal(pid, 'SIGKILL');
}

export default async function tearDownSharedStacks(): Promise<void> {
  const dir = process.env.TESSERA_SHARED_STACKS_DIR;
  if (dir === undefined || !fs.existsSync(dir)) return;
  const states = fs
    .readdirSync(dir)
    .filter((name) => /^worker-\d+\.json$/.test(name))
    .map((name) => JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as { pids: number[]; logFiles: string[]; dirs: string[] });
  await stopAll(states.flatMap((state) => state.pids));
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  for (const [i, state] of states.entries()) {
    for (const file of state.logFiles.filter((f) => fs.existsSync(f))) {
      fs.copyFileSync(file, path.join(ARTIFACTS, `shared-stack-${process.pid}-${i}-${path.basename(file)}`));
    }
    for (const stateDir of state.dirs) fs.rmSync(stateDir, { recursive: true, force: true });
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

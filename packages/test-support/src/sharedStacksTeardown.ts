/**
 * The integration project's globalTeardown: stops every shared stack (sharedStack.ts) the workers
 * started, keeps their logs in test-artifacts/logs for a human to read, and removes their data.
 * Node's modules and relative imports only, as sharedStacksSetup.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isRunning } from './processRunning';

const ARTIFACTS = path.resolve(__dirname, '../../../test-artifacts/logs');

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
  while (pids.some(isRunning) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  for (const pid of pids.filter(isRunning)) signal(pid, 'SIGKILL');
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

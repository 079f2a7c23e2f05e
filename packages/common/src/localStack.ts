import fs from 'node:fs';
import path from 'node:path';

/**
 * What `npm start` leaves for the operator CLIs (`npm run keys`, `npm run vault`) so that they
 * reach the stack it runs with no environment of their own: each service's Redis URL (its own
 * Redis user's credentials), NODE_ENV and state directory, in `.tessera/stack.json`, readable by
 * the owner only. It also remembers the port of npm start's private redis-server, so that a
 * restart comes back on the same address.
 */
export interface LocalStackFile {
  /** npm start's private redis-server (absent when it was given REDIS_URL). */
  redis?: { port: number };
  /** The environment each CLI runs with against the stack: what npm start gave that service. */
  environments: Partial<Record<LocalStackService, Record<string, string>>>;
}

export type LocalStackService = 'gateway' | 'vault';

/** The file name, in the stack's directory (`.tessera` where npm start runs, the repository root). */
export const LOCAL_STACK_FILE = 'stack.json';

/** The stack file of `stateDir`, or undefined when there is none (or it is not one). */
export function readLocalStackFile(stateDir: string): LocalStackFile | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(stateDir, LOCAL_STACK_FILE), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const parsed = JSON.parse(text) as LocalStackFile;
    return typeof parsed === 'object' && parsed !== null && typeof parsed.environments === 'object' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Written whole (a new file renamed over the old), owner only: it holds Redis passwords. */
export function writeLocalStackFile(stateDir: string, content: LocalStackFile): void {
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const file = path.join(stateDir, LOCAL_STACK_FILE);
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, JSON.stringify(content, null, 2) + '\n', { mode: 0o600 });
  fs.renameSync(temporary, file);
}

/**
 * The environment a CLI of `service` runs with: `env` as it is when it names a Redis (REDIS_URL or
 * REDIS_CLUSTER_NODES: the operator chose the store, and nothing of the development stack may mix
 * into it); otherwise what npm start wrote for that service in `.tessera/stack.json` under `cwd`,
 * with every variable `env` sets winning over it.
 */
export function withLocalStack(service: LocalStackService, env: NodeJS.ProcessEnv, cwd = process.cwd()): NodeJS.ProcessEnv {
  if (env.REDIS_URL || env.REDIS_CLUSTER_NODES) return env;
  const local = readLocalStackFile(path.join(cwd, '.tessera'))?.environments[service];
  return local === undefined ? env : { ...local, ...env };
}

import fs from 'node:fs';
import path from 'node:path';

/**
 * What `npm start` leaves for a service's operator CLI (`npm run keys` for the admin service, `npm
 * run vault` for the vault) so that it reaches the stack it runs with no environment of its own: a
 * `stack.json` in that service's own state directory (`.tessera/admin`, `.tessera/vault`),
 * readable by the owner only. It holds only LOCAL_STACK_VARIABLES: how to reach Redis as that
 * service's own user, NODE_ENV and the state directory. The service's other secrets (the vault's
 * keys, the API-key pepper) are files in that directory already, which the CLI finds through
 * TESSERA_STATE_DIR; nothing of another service is ever written there.
 */
export type LocalStackService = 'admin' | 'gateway' | 'vault';

/** The variables a CLI takes from the stack file; whatever else it is given is not written. */
// FIELDS_ORIGIN is public (the page policy names it); everything else here says where the stack's Redis is.
export const LOCAL_STACK_VARIABLES = [
  'NODE_ENV',
  'TESSERA_STATE_DIR',
  'REDIS_URL',
  'REDIS_CLUSTER_NODES',
  'REDIS_TLS_CA_FILE',
  'FIELDS_ORIGIN',
] as const;

/** The file name, in the service's state directory. */
export const LOCAL_STACK_FILE = 'stack.json';

interface LocalStackFileContent {
  environment: Record<string, string>;
}

/** The environment in the stack file of `serviceStateDir`, or undefined when there is none (or it is not one). */
export function readLocalStackFile(serviceStateDir: string): Record<string, string> | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(serviceStateDir, LOCAL_STACK_FILE), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const parsed = JSON.parse(text) as Partial<LocalStackFileContent> | null;
    const environment = parsed?.environment;
    return typeof environment === 'object' && environment !== null ? environment : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Of `environment`, only LOCAL_STACK_VARIABLES, written whole (a new file renamed over the old),
 * owner only: the Redis URL holds the service's Redis password.
 */
export function writeLocalStackFile(serviceStateDir: string, environment: Record<string, string | undefined>): void {
  const kept: Record<string, string> = {};
  for (const name of LOCAL_STACK_VARIABLES) {
    const value = environment[name];
    if (value !== undefined) kept[name] = value;
  }
  fs.mkdirSync(serviceStateDir, { recursive: true, mode: 0o700 });
  const file = path.join(serviceStateDir, LOCAL_STACK_FILE);
  const temporary = `${file}.${process.pid}.tmp`;
  const content: LocalStackFileContent = { environment: kept };
  fs.writeFileSync(temporary, JSON.stringify(content, null, 2) + '\n', { mode: 0o600 });
  fs.renameSync(temporary, file);
}

/**
 * The environment a CLI of `service` runs with: `env` as it is when it names a Redis (REDIS_URL or
 * REDIS_CLUSTER_NODES: the operator chose the store, and nothing of the development stack may mix
 * into it); otherwise what npm start wrote in the service's state directory (TESSERA_STATE_DIR,
 * by default `.tessera/<service>` under `cwd`), with every variable `env` sets winning over it.
 */
export function withLocalStack(service: LocalStackService, env: NodeJS.ProcessEnv, cwd = process.cwd()): NodeJS.ProcessEnv {
  if (env.REDIS_URL || env.REDIS_CLUSTER_NODES) return env;
  const stateDir = env.TESSERA_STATE_DIR ? path.resolve(cwd, env.TESSERA_STATE_DIR) : path.join(cwd, '.tessera', service);
  const local = readLocalStackFile(stateDir);
  return local === undefined ? env : { ...local, ...env };
}

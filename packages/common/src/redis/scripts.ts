import type { Cluster, Redis } from 'ioredis';

export interface ScriptDefinition {
  /** Absent: each call passes the number of keys as its first argument (ioredis still prefixes them). */
  numberOfKeys?: number;
  lua: string;
}

/**
 * Registers Lua scripts as commands of the client (ioredis `defineCommand`), typed as `T`. Such a
 * command goes out as EVALSHA; ioredis sends the script text only the first time on a connection
 * and again whenever Redis answers NOSCRIPT (a restart, a failover or SCRIPT FLUSH emptied its
 * script cache). An EVAL per call would send the whole text every time and make Redis hash it on
 * every request. Defining a name again (another store on the same client) replaces it.
 */
export function defineScripts<T>(redis: Redis | Cluster, scripts: Record<keyof T & string, ScriptDefinition>): T {
  for (const [name, definition] of Object.entries<ScriptDefinition>(scripts)) redis.defineCommand(name, definition);
  return redis as unknown as T;
}

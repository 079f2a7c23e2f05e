import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { redisConnectionOptions } from '../redisConnection';
import { isPromise, withCommandDeadline } from './commandDeadline';

/** A Redis client, or a Redis Cluster client (see createRedisClient). */
export type RedisClient = Redis | Cluster;

export interface RedisClientOptions {
  commandTimeoutMs: number;
  /**
   * 'server': never queue commands while disconnected, so requests fail fast with 503 and the
   * client keeps reconnecting in the background. 'cli': wait briefly for the first connection,
   * then give up.
   */
  profile: 'server' | 'cli';
  /** REDIS_CLUSTER_NODES: when non-empty, a Redis Cluster seeded by these host:port nodes. */
  clusterNodes?: readonly string[] | undefined;
  /** REDIS_TLS_CA_FILE: the CA of Redis's certificate for a rediss:// URL (unset: system CAs). */
  tlsCaFile?: string | undefined;
  /**
   * Bound every command's reply by commandTimeoutMs from when it is issued (default: for the
   * 'server' profile). A store that bounds whole operations itself (the vault's) turns it off.
   */
  commandDeadline?: boolean | undefined;
  /** Connect only on the first command or connect() (default true); false starts connecting at once. */
  lazyConnect?: boolean | undefined;
  /** Default 2000 ms; also bounds a Cluster's slot-map refresh. */
  connectTimeoutMs?: number | undefined;
}

function profileOptions(opts: RedisClientOptions): RedisOptions {
  const common: RedisOptions = {
    lazyConnect: opts.lazyConnect ?? true,
    maxRetriesPerRequest: 1,
    commandTimeout: opts.commandTimeoutMs,
    connectTimeout: opts.connectTimeoutMs ?? 2000,
    // ioredis otherwise keeps a 2 s timer alive when closing a connection that already died.
    disconnectTimeout: 500,
  };
  if (opts.profile === 'server') {
    return {
      ...common,
      enableOfflineQueue: false,
      retryStrategy: (times) => Math.min(times * 200, 2000),
      // After a failover the old primary answers writes with READONLY: reconnect (DNS/Sentinel then
      // lead to the new primary) but do not resend. The failed request answers 503 and the caller
      // retries it; a resent write could otherwise be acknowledged by a node we no longer trust.
      reconnectOnError: (err) => (err.message.startsWith('READONLY') ? 1 : false),
      // Commands issued in the same tick by concurrent requests share one write (and Redis one
      // read); under load this saves syscalls in both processes (see docs/PERFORMANCE.md).
      enableAutoPipelining: true,
    };
  }
  return { ...common, enableOfflineQueue: true, retryStrategy: (times) => (times > 3 ? null : 200) };
}

/**
 * Redis answers that name another node for a key (MOVED, ASK) or a node between two cluster states
 * (CLUSTERDOWN): the client's slot map may be out of date, after a failover or a resharding.
 */
export function isStaleSlotMapError(err: unknown): boolean {
  return err instanceof Error && /^(MOVED|ASK|CLUSTERDOWN) /.test(err.message);
}

/**
 * The Cluster client re-reading its slot map whenever a command fails with a stale-map answer.
 * ioredis does so itself for a MOVED it follows, but not for one that reaches the caller: with
 * auto-pipelining, the commands of one tick to one node share a pipeline, and ioredis follows a
 * pipeline's redirection only when every reply is the same error. Commands of two slots of a
 * master that was failed over each get their own MOVED, fail, and the map stayed stale: every
 * later request went to the old master and failed again (the gateway answered 503 for good).
 * The failed command is not resent (the caller retries it, as for any 503); the refresh makes
 * that retry go to the node that serves the slot now.
 */
function refreshingSlotsWhenStale(cluster: Cluster): Redis {
  const proxy = new Proxy(cluster, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]): unknown => {
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        // The caller still gets the rejection from `result`; this branch only refreshes.
        if (isPromise(result)) result.then(undefined, (err: unknown) => isStaleSlotMapError(err) && target.refreshSlotsCache());
        return result === target ? proxy : result;
      };
    },
  });
  return proxy as unknown as Redis;
}

function hostPortOf(entry: string): { host: string; port: number } {
  const at = entry.lastIndexOf(':');
  return { host: entry.slice(0, at), port: Number(entry.slice(at + 1)) };
}

/**
 * The one way every Tessera store connects to Redis: one Redis at `url`, or with `clusterNodes` a
 * Redis Cluster, whose nodes take their credentials and TLS from `url` when it is given. The URL
 * may hold a password: it goes to ioredis only, never log it.
 *
 * The Cluster is returned under the Redis type on purpose: it implements the same command
 * interface, and a store that uses only commands plus status/connect/quit/disconnect/on does not
 * need to know; one that does (the vault's group commit) tests `instanceof Cluster`.
 */
export function createRedisClient(url: string | undefined, opts: RedisClientOptions): Redis {
  const connected = connectClient(url, opts);
  const client = connected instanceof Cluster ? refreshingSlotsWhenStale(connected) : connected;
  // With auto-pipelining only a deadline of its own keeps REDIS_COMMAND_TIMEOUT_MS true (commandDeadline.ts).
  return (opts.commandDeadline ?? opts.profile === 'server') ? withCommandDeadline(client, opts.commandTimeoutMs) : client;
}

function connectClient(url: string | undefined, opts: RedisClientOptions): Redis {
  const options: RedisOptions = { ...profileOptions(opts), ...redisConnectionOptions(url, opts.tlsCaFile) };
  if (opts.clusterNodes === undefined || opts.clusterNodes.length === 0) {
    if (url === undefined) throw new Error('a Redis URL or Redis Cluster nodes are needed');
    return new Redis(url, options);
  }
  const cluster = new Cluster(opts.clusterNodes.map(hostPortOf), {
    redisOptions: options,
    lazyConnect: options.lazyConnect ?? true,
    enableOfflineQueue: options.enableOfflineQueue ?? false,
    enableAutoPipelining: options.enableAutoPipelining ?? false,
    // Reads on masters: a replica may not yet have a token just acknowledged or a revocation just made.
    scaleReads: 'master',
    slotsRefreshTimeout: options.connectTimeout ?? 2000,
    clusterRetryStrategy: (times) => (opts.profile === 'cli' && times > 3 ? null : Math.min(times * 200, 2000)),
  });
  return cluster as unknown as Redis;
}

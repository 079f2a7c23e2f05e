import { Redis } from 'ioredis';

/**
 * The commands clients sent to the Redis at `url` while `action` ran, in order and lower case,
 * seen through MONITOR. Commands a script runs inside Redis are left out: INFO commandstats would
 * count those too, and they cost neither a round trip nor client-side work.
 */
export async function commandsSentDuring(url: string, action: () => Promise<void>): Promise<string[]> {
  // Connected before the monitor starts, so their own hand-shakes are not seen.
  const probe = new Redis(url, { lazyConnect: true });
  await probe.connect();
  const watcher = new Redis(url, { lazyConnect: true });
  await watcher.connect();
  const monitor = await watcher.monitor();
  const seen: string[] = [];
  const marker = `end-of-action-${Math.random()}`;
  const sawMarker = new Promise<void>((resolve) => {
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (args[0]?.toLowerCase() === 'echo' && args[1] === marker) resolve();
      else if (!source.includes('lua')) seen.push((args[0] ?? '').toLowerCase());
    });
  });
  try {
    await action();
    await probe.echo(marker);
    await sawMarker;
    return seen;
  } finally {
    probe.disconnect();
    monitor.disconnect();
    watcher.disconnect();
  }
}

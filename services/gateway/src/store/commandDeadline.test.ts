import { Redis } from 'ioredis';
import { startRedisServer, type RedisServer } from '@tessera/test-support';
import { createRedisClient } from '@tessera/common/redis';

jest.setTimeout(20_000);

describe('the gateway Redis client behind a stalled Redis', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer(['--enable-debug-command', 'yes']);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('fails each command within REDIS_COMMAND_TIMEOUT_MS of being issued, also one queued behind the stalled pipeline', async () => {
    const redis = createRedisClient(server.url, { commandTimeoutMs: 500, profile: 'server' });
    await redis.connect();
    const sleeper = new Redis(server.url);
    // Closed however the test ends: without Jest's forceExit an open client would keep the run from ending.
    try {
      const stalled = sleeper.call('DEBUG', 'SLEEP', '2');
      await new Promise((r) => setTimeout(r, 50));
      const issued = (op: () => Promise<unknown>) => {
        const started = Date.now();
        return op().then(
          () => 'answered',
          () => Date.now() - started,
        );
      };
      const first = issued(() => redis.get('a'));
      // Issued once the first has been written: ioredis holds it until the first one's reply (or timeout).
      await new Promise((r) => setTimeout(r, 50));
      const queued = issued(() => redis.get('b'));
      const [firstMs, queuedMs] = await Promise.all([first, queued]);
      expect(firstMs).toEqual(expect.any(Number));
      expect(queuedMs).toEqual(expect.any(Number));
      expect(queuedMs as number).toBeLessThan(500 + 250);
      await stalled;
      // The client still works, with its events and scripts, once Redis answers again.
      expect(await redis.set('c', '1')).toBe('OK');
      expect(redis.status).toBe('ready');
    } finally {
      sleeper.disconnect();
      redis.disconnect();
    }
  });
});

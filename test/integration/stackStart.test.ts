/**
 * A stack that cannot start leaves nothing behind: when one service fails (here the gateway's
 * port is taken, EADDRINUSE), the processes already started are stopped before start() rejects,
 * so a failed beforeAll does not leave vaults and proxies running for the rest of the run.
 */
import net from 'node:net';
import { freePort, Stack, startRedis, type RedisServer } from './harness';

jest.setTimeout(60_000);

let redis: RedisServer;
let squatter: net.Server;

beforeAll(async () => {
  redis = await startRedis();
  squatter = net.createServer();
  await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  await new Promise((resolve) => squatter.close(resolve));
  await redis?.stop();
});

it('stops the services it started when another cannot listen, and says which one failed', async () => {
  const takenPort = (squatter.address() as net.AddressInfo).port;
  const stack = new Stack(redis, { vault: [await freePort()], proxy: [await freePort()], gateway: takenPort }, {});
  try {
    await expect(stack.start()).rejects.toThrow(/gateway/);
    expect(stack.processes.map((p) => [p.name, p.running])).toEqual([
      ['vault', false],
      ['proxy', false],
      ['gateway', false],
    ]);
  } finally {
    await stack.stop();
  }
});

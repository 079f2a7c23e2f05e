import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { drainingListener, installDrain } from './drain';

/** A server whose requests wait until `release` is called; `/fast` answers at once. */
async function aServer() {
  const waiting: Array<() => void> = [];
  const server = http.createServer((req, res) => {
    if (req.url === '/fast') res.end('fast');
    else waiting.push(() => res.end('slow'));
  });
  const listener = drainingListener(server, installDrain(server));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const get = (path: string) =>
    new Promise<string>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve(`${res.headers.connection ?? ''} ${body}`));
        })
        .on('error', reject);
    });
  const inFlight = async () => {
    while (waiting.length === 0) await new Promise((r) => setTimeout(r, 5));
  };
  return { listener, get, inFlight, release: () => waiting.splice(0).forEach((answer) => answer()) };
}

describe('drainingListener (the gateway under runService)', () => {
  it('resolves drain() once the request in flight is answered, with Connection: close, and refuses new connections meanwhile', async () => {
    const { listener, get, inFlight, release } = await aServer();
    const slow = get('/slow');
    await inFlight();
    let drained = false;
    const draining = listener.drain().then(() => (drained = true));
    await expect(get('/fast')).rejects.toThrow(/ECONNREFUSED/);
    expect(drained).toBe(false);
    release();
    expect(await slow).toBe('close slow');
    await draining;
    expect(drained).toBe(true);
  });

  it('cut() ends a request that outlives the deadline, and the drain then completes', async () => {
    const { listener, get, inFlight } = await aServer();
    const stuck = get('/slow');
    await inFlight();
    const draining = listener.drain();
    listener.cut();
    await expect(stuck).rejects.toThrow(/socket hang up|ECONNRESET/);
    await draining;
  });
});

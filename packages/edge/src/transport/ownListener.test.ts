import http from 'node:http';
import { ownListener } from './ownListener';

interface Answer {
  status?: number;
  connection?: string | undefined;
  error?: string;
}

function post(baseUrl: string): Promise<Answer> {
  return new Promise((resolve) => {
    const req = http.request(new URL('/pay/ps_1', baseUrl), { method: 'POST', agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    req.end('card=redacted');
  });
}

/** An app that holds every request until released, and says when one has arrived. */
function heldApp() {
  let arrived: () => void = () => undefined;
  const arrival = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const held: http.ServerResponse[] = [];
  const app: http.RequestListener = (req, res) => {
    req.resume();
    held.push(res);
    arrived();
  };
  const release = () => {
    for (const res of held.splice(0)) res.writeHead(303, { location: '/done' }).end();
  };
  return { app, arrival, release };
}

describe('a listener of its own (card fields, dashboard)', () => {
  it('answers a request already read when told to close, then takes no new connection', async () => {
    const { app, arrival, release } = heldApp();
    const listener = ownListener(() => app, 0, '127.0.0.1');
    const baseUrl = await listener.listen();
    const answer = post(baseUrl);
    await arrival;
    let closed = false;
    const closing = listener.drain().then(() => {
      closed = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    release();
    expect(await answer).toEqual({ status: 303, connection: 'close' });
    await closing;
    expect(await post(baseUrl)).toEqual({ error: 'ECONNREFUSED' });
  });

  it('cuts a connection still open when told to (at the drain deadline), so a stuck request cannot hold the shutdown', async () => {
    const { app, arrival } = heldApp();
    const listener = ownListener(() => app, 0, '127.0.0.1');
    const baseUrl = await listener.listen();
    const answer = post(baseUrl);
    await arrival;
    const drained = listener.drain();
    listener.cut();
    await drained;
    expect((await answer).error).toBe('ECONNRESET');
  });
});

import * as grpc from '@grpc/grpc-js';
import { checkHealth, createHealthClient, createHealthHandlers, healthService, type HealthClient } from './health';

let server: grpc.Server;
let client: HealthClient;
let ready: () => Promise<boolean>;

beforeAll(async () => {
  server = new grpc.Server();
  server.addService(
    healthService,
    createHealthHandlers(['tessera.test.v1.Thing'], () => ready()),
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  client = createHealthClient(`127.0.0.1:${port}`);
});

afterAll(() => {
  client.close();
  server.forceShutdown();
});

async function statusOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    return await promise;
  } catch (err) {
    return (err as grpc.ServiceError).code;
  }
}

describe('grpc.health.v1 Check', () => {
  it('answers SERVING for the whole server ("") and for a service it serves, when ready', async () => {
    ready = async () => true;
    expect(await checkHealth(client, '', 2000)).toBe('SERVING');
    expect(await checkHealth(client, 'tessera.test.v1.Thing', 2000)).toBe('SERVING');
  });

  it('answers NOT_SERVING when not ready, and when the readiness check itself fails', async () => {
    ready = async () => false;
    expect(await checkHealth(client, '', 2000)).toBe('NOT_SERVING');
    ready = () => Promise.reject(new Error('redis down'));
    expect(await checkHealth(client, 'tessera.test.v1.Thing', 2000)).toBe('NOT_SERVING');
  });

  it('fails an unknown service with NOT_FOUND, as the protocol requires', async () => {
    ready = async () => true;
    expect(await statusOf(checkHealth(client, 'tessera.other.v1.Nope', 2000))).toBe(grpc.status.NOT_FOUND);
  });
});

describe('grpc.health.v1 Watch', () => {
  /** The statuses one Watch stream receives until `until` has been seen or the stream ends. */
  function watch(service: string, until: (statuses: string[]) => boolean, onData?: (statuses: string[]) => void): Promise<string[]> {
    return new Promise((resolve, reject) => {
      const statuses: string[] = [];
      const stream = client.Watch({ service });
      stream.on('data', (res: { status: string }) => {
        statuses.push(res.status);
        onData?.(statuses);
        if (until(statuses)) {
          stream.cancel();
          resolve(statuses);
        }
      });
      stream.on('error', (err: grpc.ServiceError) => (err.code === grpc.status.CANCELLED ? undefined : reject(err)));
      stream.on('end', () => resolve(statuses));
    });
  }

  it('sends the current status at once, then each change as readiness changes', async () => {
    ready = async () => true;
    const statuses = await watch(
      'tessera.test.v1.Thing',
      (s) => s.length === 3,
      // Each change is pushed by the server's own polling; the client asks nothing again.
      (s) => (ready = s.length === 1 ? async () => false : async () => true),
    );
    expect(statuses).toEqual(['SERVING', 'NOT_SERVING', 'SERVING']);
  });

  it('reports a readiness check that never answers as NOT_SERVING', async () => {
    ready = () => new Promise(() => undefined);
    // Another watcher may still be hearing the last status; the stalled check turns it within a poll.
    const statuses = await watch('', (s) => s.includes('NOT_SERVING'));
    expect(statuses[statuses.length - 1]).toBe('NOT_SERVING');
    ready = async () => true;
  });

  it('answers SERVICE_UNKNOWN for a name the server does not serve, and keeps the stream open', async () => {
    expect(await watch('tessera.other.v1.Nope', (s) => s.length === 1)).toEqual(['SERVICE_UNKNOWN']);
  });
});

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

  it('leaves Watch unimplemented', async () => {
    const code = await new Promise((resolve) => {
      const stream = client.Watch({ service: '' }, { deadline: new Date(Date.now() + 2000) });
      stream.on('error', (err: grpc.ServiceError) => resolve(err.code));
      stream.on('data', () => resolve('data'));
    });
    expect(code).toBe(grpc.status.UNIMPLEMENTED);
  });
});

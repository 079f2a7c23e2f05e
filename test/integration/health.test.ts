import * as grpc from '@grpc/grpc-js';
import {
  checkHealth,
  clientCredentials,
  createHealthClient,
  devTlsFiles,
  readTlsMaterial,
  tlsChannelOptions,
  type HealthClient,
} from '@tessera/protos';
import { useStack } from './harness';

jest.setTimeout(60_000);

const env = useStack({ tls: true });

const clients: HealthClient[] = [];

afterAll(async () => {
  for (const c of clients) c.close();
});

/** A Health client with one service's certificate, to the vault or the proxy of the running stack. */
function healthClient(as: 'gateway' | 'proxy' | 'fields', to: 'vault' | 'proxy'): HealthClient {
  const tls = readTlsMaterial(devTlsFiles(env.stack.certDir as string, as));
  const address = (to === 'vault' ? env.stack.env.VAULT_ADDR : env.stack.env.PROXY_ADDR) as string;
  const client = createHealthClient(address, clientCredentials(tls), tlsChannelOptions(tls, to));
  clients.push(client);
  return client;
}

async function codeOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    return await promise;
  } catch (err) {
    return (err as grpc.ServiceError).code;
  }
}

describe('grpc.health.v1 on the real vault and proxy, over mTLS', () => {
  it('answers SERVING to the callers the mTLS policy allows', async () => {
    expect(await checkHealth(healthClient('gateway', 'vault'), '', 5000)).toBe('SERVING');
    expect(await checkHealth(healthClient('gateway', 'vault'), 'tessera.vault.v1.Vault', 5000)).toBe('SERVING');
    expect(await checkHealth(healthClient('proxy', 'vault'), '', 5000)).toBe('SERVING');
    expect(await checkHealth(healthClient('gateway', 'proxy'), 'tessera.proxy.v1.Proxy', 5000)).toBe('SERVING');
  });

  it('keeps the proxy’s own caller policy: only its callers, the gateway and the fields service, may ask it', async () => {
    expect(await checkHealth(healthClient('fields', 'proxy'), 'tessera.proxy.v1.Proxy', 5000)).toBe('SERVING');
    expect(await codeOf(checkHealth(healthClient('proxy', 'proxy'), '', 5000))).toBe(grpc.status.PERMISSION_DENIED);
  });

  it('answers NOT_FOUND for a service the server does not run', async () => {
    expect(await codeOf(checkHealth(healthClient('gateway', 'vault'), 'tessera.proxy.v1.Proxy', 5000))).toBe(grpc.status.NOT_FOUND);
  });

  it('reports the proxy NOT_SERVING once the vault it depends on is gone', async () => {
    await env.stack.vault.stop();
    expect(await checkHealth(healthClient('gateway', 'proxy'), '', 10_000)).toBe('NOT_SERVING');
  });
});

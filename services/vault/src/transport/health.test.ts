import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { createLogger } from '@tessera/common';
import {
  checkHealth,
  clientCredentials,
  createHealthClient,
  devTlsFiles,
  generateDevCertificates,
  readTlsMaterial,
  tlsChannelOptions,
  type HealthClient,
} from '@tessera/protos';
import { Redis } from 'ioredis';
import { useRedisServer } from '@tessera/test-support';
import type { RedisCardStore } from '../store/redisCardStore';
import { anEmptyRedisCardStore, aVault } from '../test/builders';
import { createVaultHandlers } from './grpcHandlers';
import { startVaultServer, VAULT_SERVICE_NAME } from './server';
import { shutdownServer } from '@tessera/protos';

jest.setTimeout(30_000);

let dir: string;
let server: grpc.Server;
let address: string;
let ready = true;
let store: RedisCardStore;
const clients: HealthClient[] = [];

/** This file's private redis-server: the vault's card store. */
const db = useRedisServer((url) => new Redis(url));

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-health-certs-'));
  generateDevCertificates(dir, ['gateway', 'vault', 'proxy', 'intruder']);
  store = await anEmptyRedisCardStore(db);
  const vault = aVault({ store });
  const running = await startVaultServer(
    '127.0.0.1:0',
    createVaultHandlers(vault, createLogger('vault-test', 'silent')),
    { material: readTlsMaterial(devTlsFiles(dir, 'vault')), gatewayName: 'gateway', proxyName: 'proxy' },
    async () => ready,
  );
  server = running.server;
  address = `127.0.0.1:${running.port}`;
});

afterAll(async () => {
  for (const c of clients) c.close();
  if (server) await shutdownServer(server, 2000);
  await store?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function clientAs(name: string): HealthClient {
  const tls = readTlsMaterial(devTlsFiles(dir, name));
  const c = createHealthClient(address, clientCredentials(tls), tlsChannelOptions(tls, 'vault'));
  clients.push(c);
  return c;
}

async function codeOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    return await promise;
  } catch (err) {
    return (err as grpc.ServiceError).code;
  }
}

describe('vault grpc.health.v1 over mutual TLS', () => {
  it('lets the gateway and the proxy check, answering from the vault’s readiness', async () => {
    ready = true;
    expect(await checkHealth(clientAs('gateway'), '', 3000)).toBe('SERVING');
    expect(await checkHealth(clientAs('proxy'), VAULT_SERVICE_NAME, 3000)).toBe('SERVING');
    ready = false;
    expect(await checkHealth(clientAs('gateway'), VAULT_SERVICE_NAME, 3000)).toBe('NOT_SERVING');
    ready = true;
  });

  it('refuses a certificate whose SAN names no allowed caller, and a client without a certificate', async () => {
    expect(await codeOf(checkHealth(clientAs('intruder'), '', 3000))).toBe(grpc.status.PERMISSION_DENIED);
    const plain = createHealthClient(address);
    clients.push(plain);
    expect(await codeOf(checkHealth(plain, '', 3000))).toBe(grpc.status.UNAVAILABLE);
  });
});

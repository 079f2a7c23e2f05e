import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import * as grpc from '@grpc/grpc-js';
import {
  callUnary,
  clientCredentials,
  createVaultClient,
  devTlsFiles,
  generateDevCertificates,
  readTlsMaterial,
  shutdownServer,
  tlsChannelOptions,
  tokenizeRequestToWire,
  type TokenizeRequest,
  type TokenRecord__Output,
  type VaultClient,
  type WireTokenizeRequest,
} from '@tessera/protos';
import { Redis } from 'ioredis';
import { useRedisServer } from '@tessera/test-support';
import type { RedisCardStore } from '../store/redisCardStore';
import { aCard, anEmptyRedisCardStore, aVault } from '../test/builders';
import { createVaultHandlers } from './grpcHandlers';
import { startVaultServer, vaultCallerPolicy, vaultHealthCallerPolicy } from './server';

jest.setTimeout(30_000);

const NAMES = { gatewayName: 'gateway', proxyName: 'proxy', fieldsName: 'fields', inboundName: 'inbound' };

describe('the vault caller policy for the inbound identity', () => {
  it('allows it Tokenize only, and health Check and Watch', () => {
    const policy = vaultCallerPolicy(NAMES);
    expect(Object.entries(policy).flatMap(([rpc, callers]) => (callers.includes('inbound') ? [rpc] : []))).toEqual(['Tokenize']);
    expect(vaultHealthCallerPolicy(NAMES).Check).toContain('inbound');
  });

  it('allows it nothing when no inbound name is configured', () => {
    const { inboundName: _none, ...without } = NAMES;
    expect([...Object.values(vaultCallerPolicy(without)), ...Object.values(vaultHealthCallerPolicy(without))].flat()).not.toContain(
      'inbound',
    );
  });
});

describe('the inbound identity over mutual TLS', () => {
  const db = useRedisServer((url) => new Redis(url));
  const servers: grpc.Server[] = [];
  const clients: VaultClient[] = [];
  let dir: string;
  let store: RedisCardStore;
  let client: VaultClient;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-certs-'));
    generateDevCertificates(dir, ['gateway', 'vault', 'proxy', 'inbound']);
    store = await anEmptyRedisCardStore(db);
    const handlers = createVaultHandlers(aVault({ store }), pino({ level: 'silent' }), undefined, { inboundName: 'inbound' });
    const running = await startVaultServer('127.0.0.1:0', handlers, {
      material: readTlsMaterial(devTlsFiles(dir, 'vault')),
      ...NAMES,
    });
    servers.push(running.server);
    const tls = readTlsMaterial(devTlsFiles(dir, 'inbound'));
    client = createVaultClient(`127.0.0.1:${running.port}`, clientCredentials(tls), tlsChannelOptions(tls, 'vault'));
    clients.push(client);
  });

  afterAll(async () => {
    for (const c of clients) c.close();
    for (const s of servers) await shutdownServer(s, 2000);
    await store?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const tokenize = (request: TokenizeRequest) =>
    callUnary<WireTokenizeRequest, TokenRecord__Output>(client, client.tokenize, tokenizeRequestToWire(request), { timeoutMs: 3000 });
  const statusOf = (promise: Promise<unknown>) =>
    promise.then(
      () => 'succeeded',
      (e: grpc.ServiceError) => e.code,
    );

  it('makes a durable token with the asked aliases, answered without bin or fingerprint', async () => {
    const record = await tokenize(aCard({ cvv: '', aliasFormats: ['card_bin_last4'] }));
    expect(record.provisional).toBe(false);
    expect(record.bin).toBe('');
    expect(record.fingerprint).toBe('');
    expect(record.aliases.card_bin_last4).toMatch(/^424242\d{6}4242$/);
  });

  it('may not make provisional tokens nor ask for the existing one', async () => {
    expect(await statusOf(tokenize(aCard({ cvv: '', provisional: true })))).toBe(grpc.status.PERMISSION_DENIED);
    expect(await statusOf(tokenize(aCard({ cvv: '', dedupe: true })))).toBe(grpc.status.PERMISSION_DENIED);
  });

  it('may not read a token back', async () => {
    const record = await tokenize(aCard({ cvv: '' }));
    const read = new Promise((resolve, reject) =>
      client.getToken({ merchantId: 'm_1', token: record.token }, (err: grpc.ServiceError | null, value: unknown) =>
        err ? reject(err) : resolve(value),
      ),
    );
    expect(await statusOf(read)).toBe(grpc.status.PERMISSION_DENIED);
  });
});

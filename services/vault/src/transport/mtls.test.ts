import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { createLogger } from '@tessera/common';
import {
  callUnary,
  clientCredentials,
  createVaultClient,
  devTlsFiles,
  generateDevCertificates,
  readTlsMaterial,
  tlsChannelOptions,
  type RenderRequest,
  type TlsMaterial,
  type TokenizeRequest,
  type TokenRecord__Output,
  type TokenRef,
  type VaultClient,
} from '@tessera/protos';
import { createVaultHandlers } from './grpcHandlers';
import { startVaultServer } from './server';
import { shutdownServer } from '@tessera/protos';
import { Redis } from 'ioredis';
import { useRedisServer } from '@tessera/test-support';
import type { RedisCardStore } from '../store/redisCardStore';
import { anEmptyRedisCardStore, aVault } from '../test/builders';

jest.setTimeout(30_000);

let dir: string;
let otherCaDir: string;
let server: grpc.Server;
let address: string;
let store: RedisCardStore;
const clients: VaultClient[] = [];

const material = (certDir: string, name: string): TlsMaterial => readTlsMaterial(devTlsFiles(certDir, name));

/** This file's private redis-server: the vault's card store. */
const db = useRedisServer((url) => new Redis(url));

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-certs-'));
  otherCaDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-other-ca-'));
  generateDevCertificates(dir, ['gateway', 'vault', 'proxy', 'intruder']);
  // A whole second PKI whose "gateway" certificate carries the right name but the wrong issuer.
  generateDevCertificates(otherCaDir, ['gateway']);

  store = await anEmptyRedisCardStore(db);
  const vault = aVault({ store });
  const running = await startVaultServer('127.0.0.1:0', createVaultHandlers(vault, createLogger('vault-test', 'silent')), {
    material: material(dir, 'vault'),
    gatewayName: 'gateway',
    proxyName: 'proxy',
  });
  server = running.server;
  address = `127.0.0.1:${running.port}`;
});

afterAll(async () => {
  for (const c of clients) c.close();
  if (server) await shutdownServer(server, 2000);
  await store?.close();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(otherCaDir, { recursive: true, force: true });
});

function clientWith(credentials: grpc.ChannelCredentials, options: grpc.ChannelOptions = {}): VaultClient {
  const c = createVaultClient(address, credentials, options);
  clients.push(c);
  return c;
}

/** A client as a service would build it: its own certificate, expecting the server to be `vault`. */
function serviceClient(tls: TlsMaterial, serverName = 'vault'): VaultClient {
  return clientWith(clientCredentials(tls), tlsChannelOptions(tls, serverName));
}

const card: TokenizeRequest = {
  merchantId: 'merchant_a',
  number: '4242424242424242',
  holderName: '',
  expiryMonth: 12,
  expiryYear: new Date().getUTCFullYear() + 2,
  cvv: '',
  mode: 'test',
};

async function statusOf(promise: Promise<unknown>): Promise<grpc.status | 'ok'> {
  try {
    await promise;
    return 'ok';
  } catch (err) {
    return (err as grpc.ServiceError).code;
  }
}

const tokenize = (c: VaultClient) => callUnary<TokenizeRequest, TokenRecord__Output>(c, c.tokenize, card, { timeoutMs: 3000 });
const getToken = (c: VaultClient, token: string) =>
  callUnary<TokenRef, TokenRecord__Output>(c, c.getToken, { merchantId: 'merchant_a', mode: 'test', token }, { timeoutMs: 3000 });
const retainToken = (c: VaultClient, token: string) =>
  callUnary<TokenRef, TokenRecord__Output>(c, c.retainToken, { merchantId: 'merchant_a', mode: 'test', token }, { timeoutMs: 3000 });
const render = (c: VaultClient, token: string) =>
  callUnary<RenderRequest, { body: Buffer }>(
    c,
    c.render,
    { merchantId: 'merchant_a', mode: 'test', token, template: '[CARD_NUMBER]', contentType: 'text/plain' },
    { timeoutMs: 3000 },
  );

describe('vault gRPC over mutual TLS', () => {
  it('serves the gateway token management and the proxy rendering, each with its own certificate', async () => {
    const gateway = serviceClient(material(dir, 'gateway'));
    const proxy = serviceClient(material(dir, 'proxy'));
    const created = await tokenize(gateway);
    expect((await getToken(gateway, created.token)).last4).toBe('4242');
    expect((await retainToken(gateway, created.token)).provisional).toBe(false);
    expect(Buffer.from((await render(proxy, created.token)).body).toString()).toBe('4242424242424242');
  });

  it('answers PERMISSION_DENIED when a service calls an RPC that is not its own', async () => {
    const gateway = serviceClient(material(dir, 'gateway'));
    const proxy = serviceClient(material(dir, 'proxy'));
    const { token } = await tokenize(gateway);
    expect(await statusOf(render(gateway, token))).toBe(grpc.status.PERMISSION_DENIED);
    expect(await statusOf(tokenize(proxy))).toBe(grpc.status.PERMISSION_DENIED);
    expect(await statusOf(getToken(proxy, token))).toBe(grpc.status.PERMISSION_DENIED);
    expect(await statusOf(retainToken(proxy, token))).toBe(grpc.status.PERMISSION_DENIED);
  });

  it('refuses a certificate from its own CA whose SAN names no allowed service', async () => {
    const intruder = serviceClient(material(dir, 'intruder'));
    expect(await statusOf(tokenize(intruder))).toBe(grpc.status.PERMISSION_DENIED);
  });

  it('refuses a plaintext client', async () => {
    expect(await statusOf(tokenize(clientWith(grpc.credentials.createInsecure())))).toBe(grpc.status.UNAVAILABLE);
  });

  it('refuses a TLS client that presents no certificate', async () => {
    const ca = material(dir, 'gateway').ca;
    expect(await statusOf(tokenize(clientWith(grpc.credentials.createSsl(ca), tlsChannelOptions(material(dir, 'gateway'), 'vault'))))).toBe(
      grpc.status.UNAVAILABLE,
    );
  });

  it('refuses a client certificate issued by another CA, even with the right name', async () => {
    const foreign = material(otherCaDir, 'gateway');
    // Trusts our CA for the server, but presents a certificate our vault did not issue.
    const mixed: TlsMaterial = { ...foreign, ca: material(dir, 'gateway').ca };
    expect(await statusOf(tokenize(serviceClient(mixed)))).toBe(grpc.status.UNAVAILABLE);
  });

  it('lets a client refuse a server whose certificate does not name the expected service', async () => {
    // The vault's certificate says "vault"; a client that expects "proxy" there must not talk to it.
    expect(await statusOf(tokenize(serviceClient(material(dir, 'gateway'), 'proxy')))).toBe(grpc.status.UNAVAILABLE);
  });
});

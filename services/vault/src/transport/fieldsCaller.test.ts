import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import * as grpc from '@grpc/grpc-js';
import { LOG_REDACTION } from '@tessera/common';
import { RedisCvcSessionStore } from '@tessera/merchant-data';
import {
  callUnary,
  clientCredentials,
  createVaultClient,
  devTlsFiles,
  errorRaisedByPeer,
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

const NAMES = { gatewayName: 'gateway', proxyName: 'proxy', fieldsName: 'fields' };

describe('the vault caller policy for the fields identity', () => {
  it('allows it Tokenize and AttachCvv only, and health Check and Watch', () => {
    const policy = vaultCallerPolicy(NAMES);
    expect(Object.entries(policy).flatMap(([rpc, callers]) => (callers.includes('fields') ? [rpc] : []))).toEqual([
      'Tokenize',
      'AttachCvv',
    ]);
    expect(vaultHealthCallerPolicy(NAMES)).toEqual({ Check: ['gateway', 'proxy', 'fields'], Watch: ['gateway', 'proxy', 'fields'] });
  });

  it('allows it nothing when no fields name is configured', () => {
    const { fieldsName: _none, ...withoutFields } = NAMES;
    const everyone = [...Object.values(vaultCallerPolicy(withoutFields)), ...Object.values(vaultHealthCallerPolicy(withoutFields))].flat();
    expect(everyone).not.toContain('fields');
  });

  it('keeps the gateway and proxy rights as they were', () => {
    expect(vaultCallerPolicy(NAMES)).toEqual({
      Tokenize: ['gateway', 'fields'],
      TokenizeBatch: ['gateway'],
      GetToken: ['gateway'],
      DeleteToken: ['gateway'],
      RetainToken: ['gateway'],
      Render: ['proxy'],
      RenderBatch: ['proxy'],
      Preview: ['proxy'],
      UpdateToken: ['gateway'],
      AttachCvv: ['gateway', 'fields'],
      RenderRoute: ['proxy'],
      IssueHostCertificate: ['gateway'],
      GetCaCertificate: ['gateway'],
    });
  });
});

describe('the fields identity over mutual TLS', () => {
  const db = useRedisServer((url) => new Redis(url));
  const logLines: string[] = [];
  const observed: string[] = [];
  const servers: grpc.Server[] = [];
  const clients: VaultClient[] = [];
  let dir: string;
  let store: RedisCardStore;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-certs-'));
    generateDevCertificates(dir, ['gateway', 'vault', 'proxy', 'fields']);
    store = await anEmptyRedisCardStore(db);
  });

  afterAll(async () => {
    for (const c of clients) c.close();
    for (const s of servers) await shutdownServer(s, 2000);
    await store?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A vault whose TLS_PEER_FIELDS is `fieldsName`, and a client of it with the `fields` certificate. */
  async function fieldsClientOfVault(fieldsName: string): Promise<VaultClient> {
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    const handlers = createVaultHandlers(
      aVault({ store }),
      pino({ level: 'info', ...LOG_REDACTION }, sink),
      (rpc, outcome) => observed.push(`${rpc} ${outcome}`),
      { cvcSessions: new RedisCvcSessionStore(db.client), fieldsName },
    );
    const running = await startVaultServer('127.0.0.1:0', handlers, {
      material: readTlsMaterial(devTlsFiles(dir, 'vault')),
      gatewayName: 'gateway',
      proxyName: 'proxy',
      fieldsName,
    });
    servers.push(running.server);
    const tls = readTlsMaterial(devTlsFiles(dir, 'fields'));
    const client = createVaultClient(`127.0.0.1:${running.port}`, clientCredentials(tls), tlsChannelOptions(tls, 'vault'));
    clients.push(client);
    return client;
  }

  const card = (overrides: Partial<TokenizeRequest>): TokenizeRequest => aCard({ cvv: '', ...overrides });
  const tokenize = (client: VaultClient, request: TokenizeRequest) =>
    callUnary<WireTokenizeRequest, TokenRecord__Output>(client, client.tokenize, tokenizeRequestToWire(request), { timeoutMs: 3000 });

  async function failureOf(promise: Promise<unknown>): Promise<{ status: grpc.status; refusal: string | undefined }> {
    const err = await promise.then(
      () => {
        throw new Error('the call succeeded');
      },
      (e: grpc.ServiceError) => e,
    );
    return { status: err.code, refusal: errorRaisedByPeer(err)?.code };
  }

  it('refuses a non-provisional token as PERMISSION_DENIED without a typed refusal, and warns the vault operators', async () => {
    const client = await fieldsClientOfVault('fields');
    expect(await failureOf(tokenize(client, card({})))).toEqual({ status: grpc.status.PERMISSION_DENIED, refusal: undefined });
    expect(observed).toContain('Tokenize caller_not_allowed');
    const warning = logLines.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line.msg === 'caller not allowed');
    expect(warning).toMatchObject({ level: 40, rpc: 'Tokenize', refused: 'the fields identity may create provisional tokens only' });
    expect(logLines.join('\n')).not.toContain('4242424242424242');
  });

  it('gives the fields rights to the name TLS_PEER_FIELDS sets, and none to a certificate of another name', async () => {
    const client = await fieldsClientOfVault('shop-fields');
    expect((await failureOf(tokenize(client, card({ provisional: true })))).status).toBe(grpc.status.PERMISSION_DENIED);
  });
});

/**
 * Issue 28, item 3 (vault side, ADR 0013 points 3-4): RenderRoute for the proxy's identity only,
 * and the per-merchant CA for the gateway's only. A real vault over mutual TLS, on a Redis with the
 * shipped ACL users (the vault reads routes and keeps CAs as its own user); the leaf is checked by
 * a real TLS handshake on loopback.
 */
import crypto, { X509Certificate } from 'node:crypto';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { Redis } from 'ioredis';
import {
  callUnary,
  clientCredentials,
  createVaultClient,
  devTlsFiles,
  errorRaisedByPeer,
  readTlsMaterial,
  tlsChannelOptions,
  type VaultClient,
} from '@tessera/protos';
import { parseRouteDocument, RedisRouteStore, type RouteDocumentInput } from '@tessera/routes';
import { aCard, apiClient, findCardDataInLogs, TEST_CARDS, TEST_CVV, useStack } from './harness';

jest.setTimeout(90_000);

const env = useStack({ tls: true, redis: { acl: true } });
const MERCHANT = 'route-shop';
const CALL = { timeoutMs: 5000 };

const ROUTE: RouteDocumentInput = {
  id: 'psp',
  kind: 'outbound',
  mode: 'test',
  outbound: { hosts: ['api.psp.test', '*.adyen.test'] },
  filters: [
    { location: 'form', field: 'card[number]', store: 'number' },
    { location: 'form', field: 'card[cvc]', store: 'cvv' },
    { location: 'json', pointer: '/card/number', store: 'number' },
    { location: 'json', pointer: '/card/exp_month', store: 'expiry_month' },
    { location: 'text', pattern: 'card_number', store: 'number', aliasFormat: 'card_bin_last4' },
  ],
};
const routeJson = JSON.stringify(ROUTE);

/** The answers as the contract (vault.proto) has them; int64 arrives as a string. */
interface RenderRouteAnswer {
  body: Buffer;
  tokens: string[];
}
interface HostCertificateAnswer {
  certificateChainPem: string;
  notAfterUnix: string;
}
interface CaAnswer {
  certificatePem: string;
}

const clients: VaultClient[] = [];
let asMerchant: ReturnType<typeof apiClient>;
let vaultRedis: Redis;

beforeAll(async () => {
  asMerchant = apiClient(env.stack, env.stack.createKey(MERCHANT, 'test').apiKey);
  // The admin user writes routes (npm run routes, /admin/v1/routes): as it does.
  const admin = new Redis(env.redis.url);
  await new RedisRouteStore(admin).put(MERCHANT, parseRouteDocument(ROUTE), new Date());
  await admin.quit();
  vaultRedis = new Redis(env.redis.users!.vault);
});

afterAll(async () => {
  for (const c of clients) c.close();
  await vaultRedis.quit();
});

/** A vault client as the named service builds it: its own certificate, the vault's name expected. */
function vaultAs(service: 'proxy' | 'gateway'): VaultClient {
  const material = readTlsMaterial(devTlsFiles(env.stack.certDir as string, service));
  const client = createVaultClient(env.stack.env.VAULT_ADDR as string, clientCredentials(material), tlsChannelOptions(material, 'vault'));
  clients.push(client);
  return client;
}

async function outcomeOf(promise: Promise<unknown>): Promise<{ status: grpc.status | 'ok'; code?: string }> {
  try {
    await promise;
    return { status: 'ok' };
  } catch (err) {
    const code = errorRaisedByPeer(err)?.code;
    return { status: (err as grpc.ServiceError).code, ...(code === undefined ? {} : { code }) };
  }
}

const renderRoute = (client: VaultClient, contentType: string, body: string) =>
  callUnary<unknown, RenderRouteAnswer>(
    client,
    client.renderRoute as never,
    { merchantId: MERCHANT, keyMode: 'MODE_TEST', routeJson, contentType, body: Buffer.from(body) },
    CALL,
  );

const issue = (client: VaultClient, host: string, publicKeySpki: Buffer) =>
  callUnary<unknown, HostCertificateAnswer>(
    client,
    client.issueHostCertificate as never,
    { merchantId: MERCHANT, host, publicKeySpki },
    CALL,
  );

const caOf = async (client: VaultClient): Promise<string> =>
  (await callUnary<unknown, CaAnswer>(client, client.getCaCertificate as never, { merchantId: MERCHANT }, CALL)).certificatePem;

function leafKeys(): { privateKey: crypto.KeyObject; spki: Buffer } {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { privateKey, spki: publicKey.export({ type: 'spki', format: 'der' }) };
}

/** Whether a client that trusts only `caPem` completes a handshake with a server presenting `chainPem` under the name `servername`. */
async function handshake(chainPem: string, privateKey: crypto.KeyObject, caPem: string, servername: string): Promise<'ok' | string> {
  const server = tls.createServer({ cert: chainPem, key: privateKey.export({ type: 'pkcs8', format: 'pem' }) }, (socket) => socket.end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await new Promise<'ok' | string>((resolve) => {
      const socket = tls.connect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, servername, ca: caPem }, () => {
        socket.end();
        resolve('ok');
      });
      socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    });
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe('RenderRoute', () => {
  it('lets the proxy identity have the aliases an outbound route finds replaced by card data, the CVV once', async () => {
    const made = await asMerchant('POST', '/v1/token', aCard({ aliasFormats: ['card_bin_last4', 'uuid'] }));
    expect(made.status).toBe(201);
    const { token, aliases } = made.body as { token: string; aliases: Record<string, string> };
    const proxy = vaultAs('proxy');
    const form = `card[number]=${aliases.card_bin_last4}&card[cvc]=${aliases.uuid}&amount=100`;
    const rendered = await renderRoute(proxy, 'application/x-www-form-urlencoded', form);
    expect(rendered.body.toString()).toBe(`card[number]=${TEST_CARDS.visa}&card[cvc]=${TEST_CVV}&amount=100`);
    expect(rendered.tokens).toEqual([token]);
    // The CVV was consumed by that render, as by Render's [CARD_CVV].
    expect(await outcomeOf(renderRoute(proxy, 'application/x-www-form-urlencoded', form))).toEqual({
      status: grpc.status.FAILED_PRECONDITION,
      code: 'cvv_unavailable',
    });
    // JSON by pointer (the token id works as well as an alias), and a text body by the card-number shape.
    const json = await renderRoute(proxy, 'application/json', JSON.stringify({ card: { number: token, exp_month: aliases.uuid } }));
    expect(JSON.parse(json.body.toString())).toEqual({ card: { number: TEST_CARDS.visa, exp_month: '12' } });
    const text = await renderRoute(proxy, 'text/plain', `PAN=${aliases.card_bin_last4};`);
    expect(text.body.toString()).toBe(`PAN=${TEST_CARDS.visa};`);
    // Not an alias of theirs: unchanged, no token used.
    const other = await renderRoute(proxy, 'application/json', '{"card":{"number":"tok.AAAAAAAAAAAAAAAAAAAAAA"}}');
    expect(other).toEqual({ body: Buffer.from('{"card":{"number":"tok.AAAAAAAAAAAAAAAAAAAAAA"}}'), tokens: [] });
  });

  it('refuses the gateway identity: it never sees card data', async () => {
    expect(await outcomeOf(renderRoute(vaultAs('gateway'), 'text/plain', 'x'))).toEqual({ status: grpc.status.PERMISSION_DENIED });
  });

  it('refuses an inbound route as parameter_invalid', async () => {
    const inbound = JSON.stringify({
      ...ROUTE,
      kind: 'inbound',
      outbound: undefined,
      inbound: { path: '/in', upstream: 'https://shop.test/in' },
    });
    const client = vaultAs('proxy');
    const call = callUnary<unknown, RenderRouteAnswer>(
      client,
      client.renderRoute as never,
      { merchantId: MERCHANT, keyMode: 'MODE_TEST', routeJson: inbound, contentType: 'text/plain', body: Buffer.from('x') },
      CALL,
    );
    expect(await outcomeOf(call)).toEqual({ status: grpc.status.INVALID_ARGUMENT, code: 'parameter_invalid' });
  });
});

describe('the forward proxy’s CA', () => {
  it('answers the gateway one CA per merchant, the same every time, a CA for leaves only', async () => {
    const gateway = vaultAs('gateway');
    const pem = await caOf(gateway);
    expect(await caOf(gateway)).toBe(pem);
    const ca = new X509Certificate(pem);
    expect(ca.ca).toBe(true);
    expect(ca.subject).toContain(`CN=Tessera forward proxy CA (${MERCHANT})`);
    expect(ca.verify(ca.publicKey)).toBe(true);
    const years = (Date.parse(ca.validTo) - Date.now()) / (365.25 * 24 * 3600 * 1000);
    expect(years).toBeGreaterThan(9.9);
  });

  it('issues the gateway a leaf for a host of an outbound route that verifies against the CA, in a real TLS handshake', async () => {
    const gateway = vaultAs('gateway');
    const caPem = await caOf(gateway);
    const { privateKey, spki } = leafKeys();
    const issued = await issue(gateway, 'api.psp.test', spki);
    const [leafPem] = issued.certificateChainPem.split(/(?<=-----END CERTIFICATE-----)\n/);
    const leaf = new X509Certificate(leafPem!);
    expect(leaf.verify(new X509Certificate(caPem).publicKey)).toBe(true);
    expect(leaf.checkIssued(new X509Certificate(caPem))).toBe(true);
    expect(leaf.subjectAltName).toBe('DNS:api.psp.test');
    expect(leaf.ca).toBe(false);
    expect(leaf.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(Number(issued.notAfterUnix)).toBe(Math.floor(Date.parse(leaf.validTo) / 1000));
    expect(Number(issued.notAfterUnix) - Date.now() / 1000).toBeLessThanOrEqual(7 * 24 * 3600);
    expect(await handshake(issued.certificateChainPem, privateKey, caPem, 'api.psp.test')).toBe('ok');
    expect(await handshake(issued.certificateChainPem, privateKey, caPem, 'other.psp.test')).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
    // Another CA (another merchant’s) does not vouch for it: the chain ends in a CA the client does not trust.
    const foreign = await callUnary<unknown, CaAnswer>(gateway, gateway.getCaCertificate as never, { merchantId: 'someone-else' }, CALL);
    expect(foreign.certificatePem).not.toBe(caPem);
    expect(await handshake(issued.certificateChainPem, privateKey, foreign.certificatePem, 'api.psp.test')).toBe(
      'SELF_SIGNED_CERT_IN_CHAIN',
    );
  });

  it('issues for one label under a wildcard host, and refuses a host on no outbound route with proxy_route_not_found', async () => {
    const gateway = vaultAs('gateway');
    const { spki } = leafKeys();
    expect(new X509Certificate((await issue(gateway, 'checkout.adyen.test', spki)).certificateChainPem).subjectAltName).toBe(
      'DNS:checkout.adyen.test',
    );
    for (const host of ['evil.test', 'a.b.adyen.test', 'adyen.test', 'psp.test']) {
      expect({ host, ...(await outcomeOf(issue(gateway, host, spki))) }).toEqual({
        host,
        status: grpc.status.NOT_FOUND,
        code: 'proxy_route_not_found',
      });
    }
    const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'der' });
    expect(await outcomeOf(issue(gateway, 'api.psp.test', rsa))).toEqual({
      status: grpc.status.INVALID_ARGUMENT,
      code: 'parameter_invalid',
    });
    expect(await outcomeOf(issue(gateway, '127.0.0.1', spki))).toEqual({ status: grpc.status.INVALID_ARGUMENT, code: 'parameter_invalid' });
  });

  it('refuses the proxy identity the CA’s RPCs', async () => {
    const proxy = vaultAs('proxy');
    expect(await outcomeOf(caOf(proxy))).toEqual({ status: grpc.status.PERMISSION_DENIED });
    expect(await outcomeOf(issue(proxy, 'api.psp.test', leafKeys().spki))).toEqual({ status: grpc.status.PERMISSION_DENIED });
  });

  it('keeps the CA’s private key in Redis sealed, never as a key', async () => {
    await caOf(vaultAs('gateway'));
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, found] = await vaultRedis.scan(cursor, 'MATCH', 'tessera:ca:*', 'COUNT', 500);
      keys.push(...found);
      cursor = next;
    } while (cursor !== '0');
    expect(keys).toContain(`tessera:ca:{m:${MERCHANT}}`);
    for (const key of keys) {
      const stored = (await vaultRedis.get(key))!;
      expect(stored).not.toMatch(/PRIVATE KEY/);
      const record = JSON.parse(stored) as Record<string, string>;
      // Every binary field and the whole value: none of them parses as a private key.
      for (const candidate of [stored, ...Object.values(record).filter((v) => typeof v === 'string')]) {
        for (const bytes of [Buffer.from(candidate, 'base64'), Buffer.from(candidate)]) {
          expect(() => crypto.createPrivateKey({ key: bytes, format: 'der', type: 'pkcs8' })).toThrow();
          expect(() => crypto.createPrivateKey({ key: bytes, format: 'der', type: 'sec1' })).toThrow();
        }
      }
    }
  });
});

describe('what the services wrote', () => {
  it('holds no card number, CVV or private key in any log line', () => {
    const logs = env.stack.logs();
    expect(findCardDataInLogs(logs, Object.values(TEST_CARDS), [TEST_CVV])).toEqual([]);
    expect(logs).not.toMatch(/PRIVATE KEY/);
  });
});

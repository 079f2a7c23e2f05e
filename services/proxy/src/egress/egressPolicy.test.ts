import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import type { ForwardCall } from '@tessera/protos';
import { TesseraError } from '@tessera/common';
import { forwardToPsp, type ForwardDeps } from '../app/forward';
import { createDestinationPolicy, parseCidrList, type DestinationPolicyConfig } from '../domain/destinationPolicy';
import { closePspEgress, createPspEgress, type PspEgress } from './pspEgress';
import type { Resolver } from './resolver';

/**
 * The destination policy end to end through forwardToPsp, with spies on the only two functions
 * that make sockets (undici calls net.connect / tls.connect): a refused destination must cause
 * neither a render of card data nor a single connection attempt.
 */

const logger = pino({ level: 'silent' });
const egresses: PspEgress[] = [];
let renders = 0;
const vault = {
  render: async () => {
    renders += 1;
    return Buffer.from('{"card":"4242424242424242"}');
  },
};

/** Stub DNS: names under .test resolve as the table says; anything else must never be looked up. */
const DNS: Record<string, string[]> = {
  'private.test': ['10.1.2.3'],
  'metadata.test': ['169.254.169.254'],
  'loopback6.test': ['::1'],
  'mixed.test': ['93.184.216.34', '192.168.0.10'],
  'mapped.test': ['::ffff:127.0.0.2'],
  'cgnat.test': ['100.64.0.1'],
};
const stubResolver: Resolver = async (hostname) => {
  const answers = DNS[hostname];
  if (!answers) throw Object.assign(new Error(`unexpected lookup of ${hostname}`), { code: 'ENOTFOUND' });
  return answers.map((address) => ({ address, family: net.isIP(address) as 4 | 6 }));
};

/** The proxy's parts as main.ts wires them: one policy, asked by forwardToPsp and by the egress. */
function deps(config: Partial<DestinationPolicyConfig> = {}): ForwardDeps {
  const policy = createDestinationPolicy({ allowedCidrs: [], allowedPorts: [], ...config });
  const egress = createPspEgress({ policy, connectTimeoutMs: 2000, timeoutMs: 3000, maxResponseBytes: 1 << 20, resolve: stubResolver });
  egresses.push(egress);
  return { policy, egress, vault, logger };
}

function forwardRequest(url: string, mode: 'test' | 'live' = 'test', allowedHosts: string[] = []): ForwardCall {
  return {
    merchantId: 'm',
    mode,
    token: 'tok.x',
    method: 'POST',
    url,
    headers: [{ name: 'Content-Type', value: 'application/json' }],
    bodyTemplate: '{"card":"[CARD_NUMBER]"}',
    hasBody: true,
    allowedHosts,
  };
}

/**
 * Sockets undici opens: calls of net.connect / tls.connect made from undici's code. Node's
 * modules are shared by the whole jest worker, so a client left over from another test file
 * (a Redis reconnect, say) may call net.connect meanwhile; the stack tells them apart.
 */
let undiciSockets: string[] = [];
function spyOnSockets(module: { connect: (...args: never[]) => unknown }, name: string): void {
  const original = module.connect;
  jest.spyOn(module, 'connect').mockImplementation(function (this: unknown, ...args: never[]) {
    if (new Error().stack?.includes('undici')) undiciSockets.push(name);
    return original.apply(this, args);
  } as typeof module.connect);
}
const netConnect = { calls: () => undiciSockets.filter((s) => s === 'net').length };
const tlsConnect = { calls: () => undiciSockets.filter((s) => s === 'tls').length };
beforeEach(() => {
  renders = 0;
  undiciSockets = [];
  spyOnSockets(net as unknown as { connect: (...args: never[]) => unknown }, 'net');
  spyOnSockets(tls as unknown as { connect: (...args: never[]) => unknown }, 'tls');
});
afterEach(async () => {
  jest.restoreAllMocks();
  await Promise.all(egresses.splice(0).map((e) => closePspEgress(e).catch(() => undefined)));
});

async function refusal(promise: Promise<unknown>): Promise<TesseraError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof TesseraError) return err;
    throw err;
  }
  throw new Error('expected the destination to be refused');
}

describe('refused destinations never get a socket or a render', () => {
  it.each([
    ['loopback', 'http://127.0.0.1/'],
    ['loopback outside 127.0.0.1', 'http://127.8.9.10/'],
    ['loopback as a decimal integer', 'http://2130706433/'],
    ['loopback in hex shorthand', 'http://0x7f.1/'],
    ['loopback in octal', 'http://0177.0.0.1/'],
    ['the unspecified address', 'http://0.0.0.0/'],
    ['private 10/8', 'http://10.0.0.1/'],
    ['private 172.16/12', 'https://172.16.5.4/'],
    ['private 192.168/16', 'https://192.168.1.1/'],
    ['CGNAT 100.64/10', 'http://100.64.0.1/'],
    ['cloud metadata', 'http://169.254.169.254/latest/meta-data/'],
    ['multicast', 'http://224.0.0.1/'],
    ['broadcast', 'http://255.255.255.255/'],
    ['IPv6 loopback', 'http://[::1]/'],
    ['IPv6 unique local', 'http://[fc00::1]/'],
    ['IPv6 link-local', 'http://[fe80::1]/'],
    ['IPv4-mapped private', 'http://[::ffff:10.0.0.1]/'],
    ['NAT64 of a private address', 'http://[64:ff9b::a00:1]/'],
    ['6to4', 'http://[2002:a00:1::1]/'],
    ['Teredo', 'http://[2001::1]/'],
    ['a name resolving to a private address', 'https://private.test/'],
    ['a name resolving to the metadata service', 'http://metadata.test/'],
    ['a name resolving to IPv6 loopback', 'http://loopback6.test/'],
    ['a name with one forbidden answer among public ones', 'https://mixed.test/'],
    ['a name resolving to IPv4-mapped loopback', 'http://mapped.test/'],
    ['a name resolving to CGNAT', 'http://cgnat.test/'],
    ['ftp', 'ftp://127.0.0.1/'],
    ['file', 'file:///etc/passwd'],
    ['credentials in the URL', 'https://user:pass@private.test/'],
    ['plain http with a live key', 'http://private.test/'],
  ])('%s (%s)', async (_label, url) => {
    const mode = _label === 'plain http with a live key' ? 'live' : 'test';
    const err = await refusal(forwardToPsp(deps(), forwardRequest(url, mode)));
    expect(err.code).toBe('psp_destination_forbidden');
    expect(renders).toBe(0);
    expect(netConnect.calls()).toBe(0);
    expect(tlsConnect.calls()).toBe(0);
  });

  it.each([
    ['SSH', 'http://127.0.0.1:22/'],
    ['SMTP', 'http://127.0.0.1:25/'],
    ['Redis', 'http://127.0.0.1:6379/'],
    ['gRPC of the vault', 'https://127.0.0.1:50051/'],
    ['an alternative web port', 'https://127.0.0.1:8080/'],
  ])('a port other than 443, 80 and PSP_ALLOWED_PORTS on an otherwise allowed address: %s (%s)', async (_label, url) => {
    const d = deps({ allowedCidrs: parseCidrList(['127.0.0.1/32']), allowedPorts: [{ from: 8443, to: 8443 }] });
    const err = await refusal(forwardToPsp(d, forwardRequest(url)));
    expect(err.code).toBe('psp_destination_forbidden');
    expect(err.message).toMatch(/only on ports 443, 80, 8443/);
    expect(renders).toBe(0);
    expect(netConnect.calls()).toBe(0);
    expect(tlsConnect.calls()).toBe(0);
  });
});

describe('the merchant PSP host allowlist', () => {
  // unlisted.example is not in the stub DNS table: a lookup would fail as psp_unreachable, so
  // psp_destination_forbidden proves the allowlist answered before any DNS.
  it('refuses a host not on a non-empty list before DNS, render or socket', async () => {
    const err = await refusal(
      forwardToPsp(deps(), forwardRequest('https://unlisted.example/pay', 'test', ['api.stripe.com', '*.adyen.com'])),
    );
    expect(err.code).toBe('psp_destination_forbidden');
    expect(err.param).toBe('pspUrl');
    expect(err.message).toMatch(/not on the merchant's PSP allowlist/);
    expect(renders).toBe(0);
    expect(netConnect.calls()).toBe(0);
    expect(tlsConnect.calls()).toBe(0);
  });

  it('still applies the address policy to a listed host: being listed does not make loopback reachable', async () => {
    const err = await refusal(forwardToPsp(deps(), forwardRequest('http://127.0.0.1/', 'test', ['127.0.0.1'])));
    expect(err.code).toBe('psp_destination_forbidden');
    expect(err.message).not.toMatch(/allowlist/);
    expect(renders).toBe(0);
  });
});

describe('allowed destinations and redirects', () => {
  const servers: http.Server[] = [];
  async function listen(host: string, handler: http.RequestListener): Promise<{ port: number; connections: () => number }> {
    let connections = 0;
    const server = http.createServer(handler);
    server.on('connection', () => {
      connections += 1;
    });
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    servers.push(server);
    return { port: (server.address() as AddressInfo).port, connections: () => connections };
  }
  afterEach(async () => {
    await Promise.all(
      servers.splice(0).map(
        (s) =>
          new Promise<void>((resolve) => {
            s.closeAllConnections();
            s.close(() => resolve());
          }),
      ),
    );
  });

  it('reaches a port listed in PSP_ALLOWED_PORTS (the spy sees exactly one socket)', async () => {
    const psp = await listen('127.0.0.1', (_req, res) => res.end('{"ok":true}'));
    const d = deps({ allowedCidrs: parseCidrList(['127.0.0.1/32']), allowedPorts: [{ from: psp.port, to: psp.port }] });
    const res = await forwardToPsp(d, forwardRequest(`http://127.0.0.1:${psp.port}/charge`));
    expect(res.status).toBe(200);
    expect(renders).toBe(1);
    expect(netConnect.calls()).toBe(1);
  });

  it('reaches a host on the merchant’s PSP allowlist (an IP literal entry)', async () => {
    const psp = await listen('127.0.0.1', (_req, res) => res.end('{"ok":true}'));
    const d = deps({ allowedCidrs: parseCidrList(['127.0.0.1/32']), allowedPorts: [{ from: psp.port, to: psp.port }] });
    const res = await forwardToPsp(d, forwardRequest(`http://127.0.0.1:${psp.port}/charge`, 'test', ['127.0.0.1']));
    expect(res.status).toBe(200);
    expect(renders).toBe(1);
    expect(psp.connections()).toBe(1);
  });

  it('does not follow a redirect to a loopback address: the 3xx comes back and the target is never contacted', async () => {
    const internal = await listen('127.0.0.2', (_req, res) => res.end('internal secrets'));
    const psp = await listen('127.0.0.1', (_req, res) => {
      res.writeHead(307, { Location: `http://127.0.0.2:${internal.port}/admin` }).end();
    });
    // Even with 127.0.0.2 allowed and every port open, nothing may follow the Location header.
    const d = deps({ allowedCidrs: parseCidrList(['127.0.0.0/8']), allowedPorts: [{ from: 1024, to: 65535 }] });
    const res = await forwardToPsp(d, forwardRequest(`http://127.0.0.1:${psp.port}/charge`));
    expect(res.status).toBe(307);
    expect(res.headers).toContainEqual({ name: 'Location', value: `http://127.0.0.2:${internal.port}/admin` });
    expect(internal.connections()).toBe(0);
    expect(netConnect.calls()).toBe(1);
  });
});

import pino from 'pino';
import { TesseraError } from '@tessera/common';
import type { DetokenizationRecord, ProxyCallFacts } from '@tessera/merchant-data';
import { parseRouteDocument, type StoredRoute } from '@tessera/routes';
import type { ForwardRouteCall } from '@tessera/protos';
import { outboundRouteFor, sendTunnelRequest, type ForwardProxyDeps } from './forwardProxy';

const route = (id: string, mode: 'test' | 'live', hosts: string[]) =>
  parseRouteDocument({
    id,
    kind: 'outbound',
    mode,
    outbound: { hosts },
    filters: [{ location: 'form', field: 'card[number]', store: 'number' }],
  });
const stored = (r: ReturnType<typeof route>): StoredRoute => ({ route: r, createdAt: '', updatedAt: '' });
const inbound = parseRouteDocument({
  id: 'a-inbound',
  kind: 'inbound',
  mode: 'test',
  inbound: { path: '/checkout', upstream: 'https://shop.example/checkout' },
  filters: [{ location: 'form', field: 'cc', store: 'number' }],
});

const routes = {
  list: async () => [
    stored(inbound),
    stored(route('live-psp', 'live', ['psp.test'])),
    stored(route('stripe', 'test', ['*.stripe.test', 'psp.test'])),
  ],
  get: async () => undefined,
};

describe('which outbound route opens a host', () => {
  const key = { id: 'key_1', merchantId: 'acme', mode: 'test' as const };

  it("is an outbound route of the key's mode naming the host, exactly or by a wildcard", async () => {
    expect((await outboundRouteFor(routes, key, 'psp.test'))?.id).toBe('stripe');
    expect((await outboundRouteFor(routes, key, 'api.stripe.test'))?.id).toBe('stripe');
    expect(
      await outboundRouteFor({ ...routes, list: async () => [stored(route('live-psp', 'live', ['psp.test']))] }, key, 'psp.test'),
    ).toBeUndefined();
  });

  it('is none for another host, an inbound route or a bare parent of a wildcard', async () => {
    expect(await outboundRouteFor(routes, key, 'other.test')).toBeUndefined();
    expect(await outboundRouteFor(routes, key, 'shop.example')).toBeUndefined();
    expect(await outboundRouteFor(routes, key, 'stripe.test')).toBeUndefined();
  });
});

describe('a request from a tunnel', () => {
  const audit: DetokenizationRecord[] = [];
  const calls: ForwardRouteCall[] = [];
  let answer: () => Promise<{ status: number; headers: []; body: Buffer; pspMs: number; tokens: string[] }>;
  const deps: ForwardProxyDeps = {
    routes,
    logger: pino({ level: 'silent' }),
    proxy: {
      forwardRoute: async (call) => {
        calls.push(call);
        return answer();
      },
    },
    detokenizations: {
      append: async (record: DetokenizationRecord) => {
        audit.push(record);
      },
    } as unknown as ForwardProxyDeps['detokenizations'],
  };
  const request = (noteCall?: (call: ProxyCallFacts) => void) => ({
    key: { id: 'key_1', merchantId: 'acme', mode: 'test' as const },
    requestId: 'req_1',
    route: route('stripe', 'test', ['psp.test']),
    method: 'POST',
    url: 'https://psp.test/v1/charges?expand=card',
    headers: [{ name: 'Authorization', value: 'Bearer sk_test_1' }],
    body: Buffer.from('card[number]=4242421234564242'),
    ...(noteCall ? { noteCall } : {}),
  });

  beforeEach(() => {
    audit.length = 0;
    calls.length = 0;
  });

  it('goes to the proxy with its route, and is audited once per token whose card data went out', async () => {
    answer = async () => ({ status: 200, headers: [], body: Buffer.from('{}'), pspMs: 3, tokens: ['tok.a', 'tok.b'] });
    let noted: ProxyCallFacts | undefined;
    await sendTunnelRequest(
      deps,
      request((call) => (noted = call)),
    );
    expect(calls).toEqual([
      expect.objectContaining({ merchantId: 'acme', mode: 'test', method: 'POST', url: 'https://psp.test/v1/charges?expand=card' }),
    ]);
    expect(JSON.parse(calls[0]!.routeJson)).toMatchObject({ id: 'stripe', outbound: { hosts: ['psp.test'] } });
    expect(audit.map((a) => [a.token, a.pspHost, a.status, a.code])).toEqual([
      ['tok.a', 'psp.test', 200, null],
      ['tok.b', 'psp.test', 200, null],
    ]);
    expect(noted).toMatchObject({ token: 'tok.a,tok.b', pspStatus: 200, pspMs: 3, bodyTemplate: null, headerNames: ['Authorization'] });
  });

  it('is audited without a token when the call failed or nothing was filled in', async () => {
    answer = async () => {
      throw new TesseraError('psp_destination_forbidden');
    };
    await expect(sendTunnelRequest(deps, request())).rejects.toMatchObject({ code: 'psp_destination_forbidden' });
    answer = async () => ({ status: 404, headers: [], body: Buffer.alloc(0), pspMs: 1, tokens: [] });
    await sendTunnelRequest(deps, request());
    expect(audit.map((a) => [a.token, a.status, a.code])).toEqual([
      ['', 400, 'psp_destination_forbidden'],
      ['', 404, null],
    ]);
    expect(JSON.stringify(audit)).not.toContain('4242421234564242');
  });
});

import { TesseraError } from '@tessera/common';
import { inboundAddressOf, parseRouteDocument, type InboundOwner, type RouteDocument, type StoredRoute } from '@tessera/routes';
import type { TokenRecord__Output } from '@tessera/protos';
import type { CardTestingGuard, InboundRouteReader, RouteTokenize, UpstreamRequest } from './ports';
import { serveInbound, type InboundRequest } from './serveInbound';

const route = (id: string, inbound: Record<string, string>, extra: Record<string, unknown> = {}): RouteDocument =>
  parseRouteDocument({
    id,
    kind: 'inbound',
    mode: 'test',
    inbound: { upstream: `https://shop.example/${id}`, ...inbound },
    filters: [
      { location: 'json', pointer: '/number', store: 'number', aliasFormat: 'card_bin_last4' },
      { location: 'json', pointer: '/exp', store: 'expiry' },
      { location: 'json', pointer: '/cvc', store: 'cvv' },
    ],
    ...extra,
  });

/** The index as the admin service writes it, and the merchants' routes; `stale` names an address whose holder moved away. */
function routesOf(routes: Array<[string, RouteDocument]>, stale: Record<string, InboundOwner> = {}): InboundRouteReader {
  const index = new Map<string, InboundOwner>(Object.entries(stale));
  const byOwner = new Map<string, StoredRoute>();
  for (const [merchantId, r] of routes) {
    index.set(inboundAddressOf(r) as string, { merchantId, routeId: r.id });
    byOwner.set(`${merchantId}/${r.id}`, { route: r, createdAt: '', updatedAt: '' });
  }
  return {
    ownerOf: async (address) => index.get(address),
    route: async (owner) => byOwner.get(`${owner.merchantId}/${owner.routeId}`),
  };
}

const record = (aliases: Record<string, string>): TokenRecord__Output =>
  ({ token: 'tok.abcdefghijklmnopqrstuv', aliases }) as unknown as TokenRecord__Output;

function harness(routes: InboundRouteReader, guard?: Partial<CardTestingGuard>) {
  const tokenized: RouteTokenize[] = [];
  const forwarded: UpstreamRequest[] = [];
  const deps = {
    routes,
    vault: {
      tokenize: async (request: RouteTokenize) => {
        tokenized.push(request);
        return record({ card_bin_last4: '4242421111114242' });
      },
    },
    upstream: {
      forward: async (request: UpstreamRequest) => {
        forwarded.push(request);
        return { status: 200, headers: [], body: (async function* () {})() };
      },
    },
    cardTesting: { admitRequest: async () => undefined, admitCard: async () => undefined, ...guard },
    now: () => new Date('2026-11-26T12:00:00Z'),
  };
  return { deps, tokenized, forwarded };
}

const request = (over: Partial<InboundRequest> & { json?: unknown }): InboundRequest => ({
  method: 'POST',
  path: '/checkout',
  query: '',
  host: '127.0.0.1:8083',
  headers: [{ name: 'Content-Type', value: 'application/json' }],
  body: over.json === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(over.json)),
  clientIp: '203.0.113.9',
  proto: 'https',
  requestId: 'req_1',
  signal: new AbortController().signal,
  ...over,
});

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'served',
    (err: unknown) => (err instanceof TesseraError ? err.code : String(err)),
  );

describe('serveInbound', () => {
  it('serves the longest route path that prefixes the request’s, and a host route by its Host first', async () => {
    const routes = routesOf([
      ['acme', route('short', { path: '/checkout' })],
      ['globex', route('long', { path: '/checkout/v2' })],
      ['initech', route('host', { host: 'pay.initech.example' })],
    ]);
    const { deps, forwarded } = harness(routes);
    await serveInbound(deps, request({ path: '/checkout/v2/pay', query: 'a=1' }));
    await serveInbound(deps, request({ path: '/checkout/v22' }));
    await serveInbound(deps, request({ path: '/checkout/v2/pay', host: 'PAY.initech.example:443' }));
    expect(forwarded.map((f) => [f.merchantId, f.url])).toEqual([
      ['globex', 'https://shop.example/long/pay?a=1'],
      ['acme', 'https://shop.example/short/v22'],
      ['initech', 'https://shop.example/host/checkout/v2/pay'],
    ]);
  });

  it('ignores an index entry whose route no longer serves the address, and answers 404 then', async () => {
    const moved = route('moved', { path: '/elsewhere' });
    const { deps, forwarded } = harness(routesOf([['acme', moved]], { 'path:/checkout': { merchantId: 'acme', routeId: 'moved' } }));
    expect(await codeOf(serveInbound(deps, request({})))).toBe('route_not_found');
    expect(forwarded).toEqual([]);
  });

  it('stores the card as a durable token of the route’s merchant, mode and alias formats, and tells the proxy the Luhn-valid aliases', async () => {
    const { deps, tokenized, forwarded } = harness(routesOf([['acme', route('checkout', { path: '/checkout' })]]));
    const result = await serveInbound(deps, request({ json: { number: '4242424242424242', exp: '12/29', cvc: '046', note: 'hi' } }));
    expect(result.outcome).toBe('forwarded_card');
    expect(tokenized).toEqual([
      expect.objectContaining({
        merchantId: 'acme',
        mode: 'test',
        number: '4242424242424242',
        expiryMonth: 12,
        expiryYear: 2029,
        cvv: '046',
        aliasFormats: ['card_bin_last4'],
      }),
    ]);
    expect(tokenized[0]).not.toHaveProperty('provisional');
    expect(tokenized[0]).not.toHaveProperty('dedupe');
    expect(JSON.parse(forwarded[0]!.body.toString())).toEqual({
      number: '4242421111114242',
      exp: '12/29',
      cvc: 'tok.abcdefghijklmnopqrstuv',
      note: 'hi',
    });
    expect(forwarded[0]!.cardAliases).toEqual(['4242421111114242']);
    expect(forwarded[0]!.headers).toEqual([
      { name: 'Content-Type', value: 'application/json' },
      { name: 'x-forwarded-for', value: '203.0.113.9' },
      { name: 'x-forwarded-host', value: '127.0.0.1:8083' },
      { name: 'x-forwarded-proto', value: 'https' },
    ]);
  });

  it('sends a body without card data on byte for byte, binary ones included', async () => {
    const { deps, tokenized, forwarded } = harness(routesOf([['acme', route('checkout', { path: '/checkout' })]]));
    const binary = Buffer.from([0xff, 0xfe, 0x00, 0x34, 0x32, 0xc3, 0x28, 0x0a]);
    await serveInbound(deps, request({ body: binary, headers: [{ name: 'content-type', value: 'application/octet-stream' }] }));
    expect(forwarded[0]!.body.equals(binary)).toBe(true);
    expect(tokenized).toEqual([]);
  });

  it('refuses before tokenizing when a card-testing limit says so, and forwards nothing', async () => {
    const { deps, tokenized, forwarded } = harness(routesOf([['acme', route('checkout', { path: '/checkout' })]]), {
      admitCard: async () => {
        throw new TesseraError('rate_limited');
      },
    });
    expect(await codeOf(serveInbound(deps, request({ json: { number: '4242424242424242', exp: '12/29' } })))).toBe('rate_limited');
    expect(tokenized).toEqual([]);
    expect(forwarded).toEqual([]);
  });

  it('counts no card-testing limit for a request without a card', async () => {
    let asked = 0;
    const { deps } = harness(routesOf([['acme', route('checkout', { path: '/checkout' })]]), {
      admitRequest: async () => void asked++,
    });
    await serveInbound(deps, request({ json: { amount: 5 } }));
    expect(asked).toBe(0);
  });

  it('refuses card data in the path always, and in the query unless the route redacts', async () => {
    const refuse = harness(routesOf([['acme', route('checkout', { path: '/checkout' })]]));
    expect(await codeOf(serveInbound(refuse.deps, request({ path: '/checkout/4242424242424242' })))).toBe('card_data_unmatched');
    expect(await codeOf(serveInbound(refuse.deps, request({ query: 'pan=4242%204242%204242%204242' })))).toBe('card_data_unmatched');
    const redact = harness(routesOf([['acme', route('checkout', { path: '/checkout' }, { unmatchedCardData: 'redact' })]]));
    const result = await serveInbound(redact.deps, request({ query: 'pan=4242424242424242&x=1' }));
    expect(result.outcome).toBe('forwarded_redacted');
    expect(redact.forwarded[0]!.url).toBe('https://shop.example/checkout?pan=%5Bredacted%5D&x=1');
    expect(refuse.forwarded).toEqual([]);
  });

  it('refuses dot segments, which would leave the route’s path at the upstream', async () => {
    const { deps, forwarded } = harness(routesOf([['acme', route('checkout', { path: '/checkout' })]]));
    for (const path of ['/checkout/../admin', '/checkout/%2e%2E/admin', '/checkout/./x', '/checkout/%2E']) {
      expect({ path, code: await codeOf(serveInbound(deps, request({ path }))) }).toEqual({ path, code: 'invalid_request' });
    }
    await serveInbound(deps, request({ path: '/checkout/..x/...' }));
    expect(forwarded.map((f) => f.url)).toEqual(['https://shop.example/checkout/..x/...']);
  });
});

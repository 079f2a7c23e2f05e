import { hostAddressOf, inboundAddressOf, normalizeRoutePath, pathAddressesOf, upstreamUrlOf } from './inboundAddress';
import { parseRouteDocument } from './routeDocument';

const route = (inbound: Record<string, string>) =>
  parseRouteDocument({
    id: 'r',
    kind: 'inbound',
    mode: 'test',
    inbound,
    filters: [{ location: 'text', pattern: 'card_number', store: 'number' }],
  });

describe('inbound addresses', () => {
  it('keeps one spelling of a route path, so /checkout and /checkout/ are one address', () => {
    expect(normalizeRoutePath('/checkout/')).toBe('/checkout');
    expect(normalizeRoutePath('/')).toBe('/');
    expect(inboundAddressOf(route({ path: '/checkout/', upstream: 'https://shop.example' }))).toBe('path:/checkout');
    expect(inboundAddressOf(route({ host: 'pay.shop.example', upstream: 'https://shop.example' }))).toBe('host:pay.shop.example');
  });

  it('lists the route paths that could serve a request path, longest first, at segment boundaries only', () => {
    expect(pathAddressesOf('/checkout/v2/pay')).toEqual(['path:/checkout/v2/pay', 'path:/checkout/v2', 'path:/checkout', 'path:/']);
    expect(pathAddressesOf('/checkouts')).toEqual(['path:/checkouts', 'path:/']);
    expect(pathAddressesOf('/')).toEqual(['path:/']);
  });

  it('reads a Host header as a host name: lower case, without port or trailing dot', () => {
    expect(hostAddressOf('Pay.Shop.Example:8083')).toBe('host:pay.shop.example');
    expect(hostAddressOf('pay.shop.example.')).toBe('host:pay.shop.example');
    expect(hostAddressOf(undefined)).toBeUndefined();
  });

  it('appends the rest of the path and the query to the upstream', () => {
    const byPath = route({ path: '/checkout', upstream: 'https://shop.example/orders?src=tessera' });
    expect(upstreamUrlOf(byPath, '/checkout', '')).toBe('https://shop.example/orders?src=tessera');
    expect(upstreamUrlOf(byPath, '/checkout/', '')).toBe('https://shop.example/orders?src=tessera');
    expect(upstreamUrlOf(byPath, '/checkout/api/v1', 'ref=42')).toBe('https://shop.example/orders/api/v1?src=tessera&ref=42');
    const byHost = route({ host: 'pay.shop.example', upstream: 'https://shop.example/' });
    expect(upstreamUrlOf(byHost, '/pay/now', 'a=1')).toBe('https://shop.example/pay/now?a=1');
    const atRoot = route({ path: '/', upstream: 'https://shop.example/base' });
    expect(upstreamUrlOf(atRoot, '/x/y', '')).toBe('https://shop.example/base/x/y');
  });

  it('refuses the paths the inbound service answers its probes at', () => {
    expect(() => route({ path: '/readyz', upstream: 'https://shop.example' })).toThrow(/healthz or \/readyz/);
    expect(() => route({ path: '/healthz/x', upstream: 'https://shop.example' })).toThrow(/healthz/);
    expect(route({ path: '/readyzz', upstream: 'https://shop.example' }).inbound?.path).toBe('/readyzz');
  });
});

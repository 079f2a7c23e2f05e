import { Redis } from 'ioredis';
import { useRedisServer } from '@tessera/test-support';
import { parseRouteDocument } from '../domain/routeDocument';
import {
  INBOUND_INDEX_KEY,
  MAX_ROUTES_PER_MERCHANT,
  RedisRouteStore,
  RouteAddressTakenError,
  RouteLimitError,
  routesKey,
} from './routeStore';

const route = (id: string, hosts = ['api.stripe.com']) =>
  parseRouteDocument({
    id,
    kind: 'outbound',
    mode: 'test',
    outbound: { hosts },
    filters: [{ location: 'text', pattern: 'card_number', store: 'number' }],
  });

describe('RedisRouteStore', () => {
  const handle = useRedisServer((url) => new Redis(url));
  const store = () => new RedisRouteStore(handle.client);
  beforeEach(async () => {
    await handle.client.flushall();
  });

  it('creates, replaces (keeping when it was created), lists by id and deletes a merchant’s routes', async () => {
    const first = await store().put('acme', route('stripe'), new Date('2026-11-01T00:00:00Z'));
    expect(first.previous).toBeUndefined();
    await store().put('acme', route('adyen', ['*.adyen.com']), new Date('2026-11-02T00:00:00Z'));
    const replaced = await store().put('acme', route('stripe', ['api.stripe.com', 'files.stripe.com']), new Date('2026-11-03T00:00:00Z'));
    expect(replaced.previous?.route.outbound?.hosts).toEqual(['api.stripe.com']);
    expect(replaced.stored).toMatchObject({ createdAt: '2026-11-01T00:00:00.000Z', updatedAt: '2026-11-03T00:00:00.000Z' });

    expect((await store().list('acme')).map((r) => r.route.id)).toEqual(['adyen', 'stripe']);
    expect((await store().get('acme', 'stripe'))?.route.outbound?.hosts).toEqual(['api.stripe.com', 'files.stripe.com']);
    expect(await store().list('globex')).toEqual([]);
    expect(await store().delete('acme', 'stripe')).toBe(true);
    expect(await store().delete('acme', 'stripe')).toBe(false);
    expect(await store().get('acme', 'stripe')).toBeUndefined();
  });

  it('keeps each merchant’s routes in the merchant’s slot', async () => {
    await store().put('acme', route('stripe'), new Date());
    expect(routesKey('acme')).toBe('tessera:routes:{m:acme}:routes');
    expect(await handle.client.hkeys('tessera:routes:{m:acme}:routes')).toEqual(['stripe']);
  });

  it('refuses a new route past the limit, and still replaces an existing one', async () => {
    for (let i = 0; i < MAX_ROUTES_PER_MERCHANT; i++) await handle.client.hset(routesKey('acme'), `r${i}`, '{}');
    await expect(store().put('acme', route('one-more'), new Date())).rejects.toBeInstanceOf(RouteLimitError);
    await handle.client.hset(routesKey('acme'), 'r0', JSON.stringify({ route: route('r0'), createdAt: 'x', updatedAt: 'x' }));
    await expect(store().put('acme', route('r0'), new Date())).resolves.toMatchObject({ stored: { createdAt: 'x' } });
  });
});

describe('RedisRouteStore: the inbound address index', () => {
  const handle = useRedisServer((url) => new Redis(url));
  const store = () => new RedisRouteStore(handle.client);
  const inbound = (id: string, at: { path?: string; host?: string }) =>
    parseRouteDocument({
      id,
      kind: 'inbound',
      mode: 'test',
      inbound: { ...at, upstream: 'https://shop.example/in' },
      filters: [{ location: 'text', pattern: 'card_number', store: 'number' }],
    });
  beforeEach(async () => {
    await handle.client.flushall();
  });

  it('gives each path and host to one route of the deployment, and says which is taken', async () => {
    await store().put('acme', inbound('checkout', { path: '/checkout' }), new Date());
    await store().put('acme', inbound('pay', { host: 'pay.acme.example' }), new Date());
    expect(await store().ownerOf('path:/checkout')).toEqual({ merchantId: 'acme', routeId: 'checkout' });
    expect(await handle.client.hgetall(INBOUND_INDEX_KEY)).toEqual({
      'path:/checkout': JSON.stringify({ merchantId: 'acme', routeId: 'checkout' }),
      'host:pay.acme.example': JSON.stringify({ merchantId: 'acme', routeId: 'pay' }),
    });
    await expect(store().put('globex', inbound('checkout', { path: '/checkout/' }), new Date())).rejects.toEqual(
      new RouteAddressTakenError('path:/checkout'),
    );
    await expect(store().put('acme', inbound('other', { host: 'pay.acme.example' }), new Date())).rejects.toBeInstanceOf(
      RouteAddressTakenError,
    );
    // Refused before anything was written.
    expect(await store().get('globex', 'checkout')).toBeUndefined();
    // A longer path is another address.
    await store().put('globex', inbound('v2', { path: '/checkout/v2' }), new Date());
    // Re-applying a route keeps its own address.
    await store().put('acme', inbound('checkout', { path: '/checkout' }), new Date());
  });

  it('releases an address when its route moves away or is deleted', async () => {
    await store().put('acme', inbound('checkout', { path: '/checkout' }), new Date());
    await store().put('acme', inbound('checkout', { path: '/pay' }), new Date());
    expect(await store().ownerOf('path:/checkout')).toBeUndefined();
    await store().put('globex', inbound('mine', { path: '/checkout' }), new Date());
    expect(await store().delete('globex', 'mine')).toBe(true);
    expect(await store().ownerOf('path:/checkout')).toBeUndefined();
    expect(await store().ownerOf('path:/pay')).toEqual({ merchantId: 'acme', routeId: 'checkout' });
  });

  it('takes over an address whose holder no longer serves it (a change that stopped half-way)', async () => {
    await handle.client.hset(INBOUND_INDEX_KEY, 'path:/checkout', JSON.stringify({ merchantId: 'gone', routeId: 'old' }));
    await store().put('acme', inbound('checkout', { path: '/checkout' }), new Date());
    expect(await store().ownerOf('path:/checkout')).toEqual({ merchantId: 'acme', routeId: 'checkout' });
  });

  it('gives back a claim when the route itself is refused (the merchant is at its limit)', async () => {
    for (let i = 0; i < MAX_ROUTES_PER_MERCHANT; i++) await handle.client.hset(routesKey('acme'), `r${i}`, '{}');
    await expect(store().put('acme', inbound('checkout', { path: '/checkout' }), new Date())).rejects.toBeInstanceOf(RouteLimitError);
    expect(await store().ownerOf('path:/checkout')).toBeUndefined();
  });
});

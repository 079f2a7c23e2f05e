import { Redis } from 'ioredis';
import { useRedisServer } from '@tessera/test-support';
import { parseRouteDocument, RedisRouteStore } from '@tessera/routes';
import { CachedRouteReader } from './inboundRoutes';

const route = (path: string) =>
  parseRouteDocument({
    id: 'checkout',
    kind: 'inbound',
    mode: 'test',
    inbound: { path, upstream: 'https://shop.example/in' },
    filters: [{ location: 'text', pattern: 'card_number', store: 'number' }],
  });

describe('CachedRouteReader', () => {
  const handle = useRedisServer((url) => new Redis(url));
  beforeEach(async () => {
    await handle.client.flushall();
  });

  it('reads the index and the routes the admin service wrote, and keeps them for the cache time', async () => {
    let now = 1_000;
    const reader = new CachedRouteReader(handle.client, 5_000, () => now);
    const admin = new RedisRouteStore(handle.client);
    await admin.put('acme', route('/checkout'), new Date());
    const owner = await reader.ownerOf('path:/checkout');
    expect(owner).toEqual({ merchantId: 'acme', routeId: 'checkout' });
    expect((await reader.route(owner!))?.route.inbound?.path).toBe('/checkout');

    await admin.put('acme', route('/pay'), new Date());
    now += 4_999;
    expect(await reader.ownerOf('path:/pay')).toBeUndefined();
    expect((await reader.route(owner!))?.route.inbound?.path).toBe('/checkout');
    now += 1;
    expect(await reader.ownerOf('path:/pay')).toEqual(owner);
    expect(await reader.ownerOf('path:/checkout')).toBeUndefined();
    expect((await reader.route(owner!))?.route.inbound?.path).toBe('/pay');
  });

  it('reads afresh every time with a cache time of 0', async () => {
    const reader = new CachedRouteReader(handle.client, 0);
    expect(await reader.ownerOf('path:/checkout')).toBeUndefined();
    await new RedisRouteStore(handle.client).put('acme', route('/checkout'), new Date());
    expect(await reader.ownerOf('path:/checkout')).toEqual({ merchantId: 'acme', routeId: 'checkout' });
  });
});

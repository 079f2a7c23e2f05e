import { SERVICE_SECURITY_HEADERS } from '@tessera/edge';
import { anAdminDeps } from '../testing/fixtures';
import { useAdminRedis } from '../testing/redis';
import { startApp, type RunningApp, type TestResponse } from '../../../../packages/edge/src/testing/http';
import { createAdminApp } from './adminRouter';

const db = useAdminRedis();

function admin(hsts: number): Promise<RunningApp> {
  const deps = anAdminDeps(db.redis);
  return startApp(createAdminApp({ ...deps, config: { ...deps.config, HSTS_MAX_AGE_SECONDS: hsts } }));
}

function expectServiceHeaders(res: TestResponse) {
  for (const [name, value] of Object.entries(SERVICE_SECURITY_HEADERS)) expect([name, res.headers[name]]).toEqual([name, value]);
}

describe('the admin service’s security headers', () => {
  let app: RunningApp;
  afterEach(async () => {
    await app.close();
  });

  it("puts nosniff, DENY framing, no-referrer and CSP default-src 'none' on every response it makes", async () => {
    app = await admin(0);
    const responses = [await app.request('GET', '/admin/v1/session'), await app.request('GET', '/dashboard')];
    expect(responses.map((r) => r.status)).toEqual([401, 301]);
    for (const res of responses) {
      expectServiceHeaders(res);
      expect(res.headers['strict-transport-security']).toBeUndefined();
    }
  });

  it('leaves the dashboard page its own content security policy', async () => {
    app = await admin(0);
    const page = await app.request('GET', '/dashboard/');
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
  });

  it('sends the same headers, and HSTS when configured, on every path of its listener', async () => {
    app = await admin(600);
    for (const path of ['/admin/v1/session', '/v1/token/x']) {
      const res = await app.request('GET', path);
      expectServiceHeaders(res);
      expect(res.headers['strict-transport-security']).toBe('max-age=600');
    }
  });
});

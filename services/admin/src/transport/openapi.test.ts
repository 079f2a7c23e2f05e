import { anAdminDeps } from '../testing/fixtures';
import { useAdminRedis } from '../testing/redis';
import { startApp } from '../../../../packages/edge/src/testing/http';
import { documentRoutes, routerRoutes, validateOpenApi } from '../../../../packages/edge/src/testing/openapi';
import { createAdminApp } from './adminRouter';
import { buildAdminOpenApiDocument } from './openapi';

// The stores are never called: these tests only look at the routing table and the document.
const db = useAdminRedis();
const health = { ping: async () => undefined, timeoutMs: 100 };

/** Web pages, not API operations: the dashboard's HTML and its static files. */
const NOT_API = new Set(['GET /dashboard']);

describe('the admin OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', () => {
    const result = validateOpenApi(buildAdminOpenApiDocument());
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
  });

  it('lists every route of the admin service, and nothing it does not answer', () => {
    const fromRouter = routerRoutes(createAdminApp(anAdminDeps(db.redis), health), NOT_API).sort();
    const fromDocument = documentRoutes(buildAdminOpenApiDocument()).sort();
    expect(fromRouter).toContain('POST /admin/v1/keys/{id}/revoke');
    expect(fromDocument).toEqual(fromRouter);
  });

  it('takes the admin request bodies and parameters from the zod schemas the admin routes parse with', () => {
    const doc = buildAdminOpenApiDocument() as { components: { schemas: Record<string, any> }; paths: Record<string, Record<string, any>> };
    const { AdminLogin, AdminKeyTest, AdminFormSigningSecretRequest } = doc.components.schemas;
    expect(AdminLogin.required).toEqual(['email', 'password']);
    expect(AdminLogin.additionalProperties).toBe(false);
    expect(AdminLogin.properties.password).toMatchObject({ type: 'string', minLength: 1, maxLength: 256 });
    expect(AdminKeyTest.properties.apiKey).toMatchObject({ minLength: 1, maxLength: 100 });
    expect(AdminFormSigningSecretRequest.properties.mode).toMatchObject({ enum: ['test', 'live'] });
    const [merchantId] = doc.paths['/admin/v1/merchants/{merchantId}/psp-hosts']?.get.parameters ?? [];
    expect(merchantId).toMatchObject({ name: 'merchantId', in: 'path', required: true, schema: { pattern: '^[A-Za-z0-9_.-]{1,64}$' } });
    const audit = doc.paths['/admin/v1/audit']?.get.parameters ?? [];
    expect(audit.find((p: { name: string }) => p.name === 'limit')).toMatchObject({
      in: 'query',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
    });
  });

  it('is served at GET /admin/v1/openapi.json without a session', async () => {
    const running = await startApp(createAdminApp(anAdminDeps(db.redis), health));
    try {
      const res = await running.request('GET', '/admin/v1/openapi.json');
      expect(res.status).toBe(200);
      expect(res.json()).toEqual(JSON.parse(JSON.stringify(buildAdminOpenApiDocument())));
    } finally {
      await running.close();
    }
  });
});

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import pino from 'pino';
import type { Express } from 'express';
import { RedisApiKeyStore } from '@tessera/merchant-data';
import { anAdminDeps, anIdempotency, TEST_PEPPER } from '../testing/fixtures';
import { useGatewayRedis } from '../testing/redis';
import { startApp } from '../../../../packages/edge/src/testing/http';
import { createAdminRouter } from './admin/adminRouter';
import { createApp } from './app';
import { buildOpenApiDocument } from './openapi';
import type { FormSessionDeps } from '../app/formSessions';
import type { CvcSessionDeps } from '../app/cvcSessions';
import type { ProxyApi, VaultApi } from '../app/ports';

const ROOT = path.resolve(__dirname, '../../../..');

// The stores are never called: these tests only look at the routing table and the document.
const db = useGatewayRedis();

function app(): Express {
  return createApp({
    config: { BODY_LIMIT_BYTES: 1024, READY_TIMEOUT_MS: 100, TRUSTED_PROXIES: [] },
    logger: pino({ level: 'silent' }),
    keyStore: new RedisApiKeyStore(db.redis),
    idempotency: anIdempotency(db.redis),
    pepper: TEST_PEPPER,
    // Never called: these tests only look at the routing table and the document.
    vault: {} as VaultApi,
    proxy: {} as ProxyApi,
    formSessions: {} as FormSessionDeps,
    cvcSessions: {} as CvcSessionDeps,
    // Mounted as main.ts mounts it, so its routes are walked too; its stores are never called.
    admin: createAdminRouter(anAdminDeps(db.redis)),
  });
}

/** Web pages, not API operations: the dashboard's HTML and its static files. */
const NOT_API = new Set(['GET /dashboard']);

interface RouteLayer {
  route?: { path: string; methods: Record<string, boolean> };
  /** The path a middleware or sub-router is mounted at (router 2.x). */
  rawPath?: string;
  handle?: { stack?: RouteLayer[] };
}

/** Every method + path the Express router answers, sub-routers included, in OpenAPI's `{param}` form. */
function routesOf(stack: RouteLayer[], prefix = ''): string[] {
  return stack.flatMap((layer) => {
    if (layer.route) {
      const path = `${prefix}${layer.route.path}`.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      return Object.keys(layer.route.methods).map((method) => `${method.toUpperCase()} ${path}`);
    }
    if (layer.handle?.stack) {
      const mount = layer.rawPath && layer.rawPath !== '/' ? layer.rawPath : '';
      return routesOf(layer.handle.stack, prefix + mount);
    }
    return [];
  });
}

function routerRoutes(express: Express): string[] {
  return routesOf((express as unknown as { router: { stack: RouteLayer[] } }).router.stack).filter((r) => !NOT_API.has(r));
}

function documentRoutes(doc: Record<string, unknown>): string[] {
  return Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, ops]) =>
    Object.keys(ops).map((method) => `${method.toUpperCase()} ${p}`),
  );
}

/**
 * The validator is an ES module, which jest's CommonJS runtime cannot load; it runs in a
 * child Node process instead, reading the document from stdin.
 */
function validate(doc: unknown): { valid: boolean; errors?: unknown } {
  const script = `
    import fs from 'node:fs';
    import { Validator } from '@seriousme/openapi-schema-validator';
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(fs.readFileSync(0, 'utf8')));
    process.stdout.write(JSON.stringify({ ...result, version: validator.version }));
  `;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    input: JSON.stringify(doc),
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (run.status !== 0) throw new Error(`validator failed to run: ${run.stderr}`);
  const result = JSON.parse(run.stdout) as { valid: boolean; errors?: unknown; version: string };
  expect(result.version).toBe('3.1');
  return result;
}

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', () => {
    const result = validate(buildOpenApiDocument());
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
  });

  it('the validator rejects a broken document, so the check above can fail', () => {
    const broken = { ...buildOpenApiDocument(), paths: { '/v1/token': { post: { responses: 'nope' } } } };
    expect(validate(broken).valid).toBe(false);
  });

  it('lists every route of the Express router, and nothing the router does not answer', () => {
    const fromRouter = routerRoutes(app()).sort();
    const fromDocument = documentRoutes(buildOpenApiDocument()).sort();
    expect(fromRouter.length).toBeGreaterThanOrEqual(8);
    expect(fromRouter).toContain('POST /admin/v1/keys/{id}/revoke');
    expect(fromDocument).toEqual(fromRouter);
  });

  it('takes the request body schemas from the zod validators', () => {
    const doc = buildOpenApiDocument() as { components: { schemas: Record<string, any> } };
    const card = doc.components.schemas.TokenCreate; // the card's own schema (CardInput, shared with the fields service) plus dedupe
    expect(card.required).toEqual(['number', 'expiryMonth', 'expiryYear']);
    expect(card.additionalProperties).toBe(false);
    expect(card.properties.holderName).toMatchObject({ type: 'string', minLength: 1, maxLength: 200 });
    const proxy = doc.components.schemas.ProxyRequest;
    expect(proxy.required).toEqual(['method', 'token', 'pspUrl']);
    expect(proxy.properties.token).toMatchObject({ maxLength: 256 });
  });

  it('takes the admin request bodies and parameters from the zod schemas the admin routes parse with', () => {
    const doc = buildOpenApiDocument() as { components: { schemas: Record<string, any> }; paths: Record<string, Record<string, any>> };
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

  it('lists 403 publishable_key_forbidden, and no admin-only 403, on every /v1 route that takes an API key', () => {
    const doc = buildOpenApiDocument() as { paths: Record<string, Record<string, { responses: Record<string, any>; security?: [] }>> };
    const keyed = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/v1/'))
      .flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ route: `${method} ${path}`, op })))
      .filter(({ op }) => op.security === undefined);
    expect(keyed.map((k) => k.route).sort()).toEqual([
      'delete /v1/token/{token}',
      'get /v1/form-sessions/{id}',
      'get /v1/token/{token}',
      'patch /v1/token/{token}',
      'post /v1/form-sessions',
      'post /v1/proxy',
      'post /v1/proxy/dry-run',
      'post /v1/token',
      'post /v1/token/{token}/cvc',
      'post /v1/token/{token}/cvc-sessions',
      'post /v1/token/{token}/retain',
    ]);
    for (const { op } of keyed) expect(op.responses['403'].description).toBe('Error made by Tessera (`publishable_key_forbidden`).');
  });

  it('is served at GET /v1/openapi.json without an API key', async () => {
    const running = await startApp(app());
    try {
      const res = await running.request('GET', '/v1/openapi.json');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json()).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument())));
    } finally {
      await running.close();
    }
  });
});

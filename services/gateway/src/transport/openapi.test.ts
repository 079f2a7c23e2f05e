import pino from 'pino';
import type { Express } from 'express';
import { RedisApiKeyStore } from '@tessera/merchant-data';
import { anIdempotency, TEST_PEPPER } from '../testing/fixtures';
import { useGatewayRedis } from '../testing/redis';
import { startApp } from '../../../../packages/edge/src/testing/http';
import { documentRoutes, routerRoutes, validateOpenApi as validate } from '../../../../packages/edge/src/testing/openapi';
import { createApp } from './app';
import { buildOpenApiDocument } from './openapi';
import type { FormSessionDeps } from '../app/formSessions';
import type { CvcSessionDeps } from '../app/cvcSessions';
import type { EventReader, EventRecorder, ProxyApi, VaultApi, WebhookEndpoints } from '../app/ports';

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
    events: {} as EventReader & EventRecorder,
    webhookEndpoints: {} as WebhookEndpoints,
    forwardProxyVault: { caCertificatePem: async () => '' },
  });
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
    expect(fromRouter).toContain('POST /v1/token/{token}/retain');
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

  it('lists 403 publishable_key_forbidden, and no admin-only 403, on every /v1 route that takes an API key', () => {
    const doc = buildOpenApiDocument() as { paths: Record<string, Record<string, { responses: Record<string, any>; security?: [] }>> };
    const keyed = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/v1/'))
      .flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ route: `${method} ${path}`, op })))
      .filter(({ op }) => op.security === undefined);
    expect(keyed.map((k) => k.route).sort()).toEqual([
      'delete /v1/token/{token}',
      'delete /v1/webhook-endpoints/{id}',
      'get /v1/events',
      'get /v1/events/{id}',
      'get /v1/form-sessions',
      'get /v1/form-sessions/{id}',
      'get /v1/forward-proxy/ca.pem',
      'get /v1/token/{token}',
      'get /v1/webhook-endpoints',
      'get /v1/webhook-endpoints/{id}',
      'patch /v1/token/{token}',
      'post /v1/form-sessions',
      'post /v1/proxy',
      'post /v1/proxy/dry-run',
      'post /v1/token',
      'post /v1/token/{token}/cvc',
      'post /v1/token/{token}/cvc-sessions',
      'post /v1/token/{token}/retain',
      'post /v1/webhook-endpoints',
      'post /v1/webhook-endpoints/{id}/rotate-secret',
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

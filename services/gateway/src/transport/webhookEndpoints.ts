import type { Request, Response } from 'express';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookEndpoints,
  rotateWebhookSecret,
  type WebhookEndpointDeps,
} from '../app/webhookEndpoints';
import { apiKeyOf, sendJson } from '@tessera/edge';

/**
 * /v1/webhook-endpoints: secret-key routes (a publishable key is refused by authentication with 403
 * before these run). The use cases are in app/webhookEndpoints.ts. Answers holding a secret are
 * never cached.
 */
export function webhookEndpointRoutes(deps: WebhookEndpointDeps) {
  const idOf = (req: Request): string => String(req.params.id ?? '');
  return {
    async create(req: Request, res: Response): Promise<void> {
      const endpoint = await createWebhookEndpoint(deps, apiKeyOf(res), req.body as Record<string, unknown>);
      res.setHeader('cache-control', 'no-store');
      sendJson(res, 201, endpoint);
    },

    async list(_req: Request, res: Response): Promise<void> {
      res.setHeader('cache-control', 'no-store');
      sendJson(res, 200, await listWebhookEndpoints(deps, apiKeyOf(res)));
    },

    async get(req: Request, res: Response): Promise<void> {
      res.setHeader('cache-control', 'no-store');
      sendJson(res, 200, await getWebhookEndpoint(deps, apiKeyOf(res), idOf(req)));
    },

    async remove(req: Request, res: Response): Promise<void> {
      await deleteWebhookEndpoint(deps, apiKeyOf(res), idOf(req));
      res.setHeader('cache-control', 'no-store');
      res.status(204).end();
    },

    async rotateSecret(req: Request, res: Response): Promise<void> {
      const endpoint = await rotateWebhookSecret(deps, apiKeyOf(res), idOf(req), (req.body ?? {}) as Record<string, unknown>);
      res.setHeader('cache-control', 'no-store');
      sendJson(res, 200, endpoint);
    },
  };
}

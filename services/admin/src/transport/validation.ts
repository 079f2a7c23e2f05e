import type { Request } from 'express';
import type { z } from 'zod';
import { parseInput } from '@tessera/edge';

/**
 * Admin input goes through the zod schemas of the use cases (app/), as /v1 input goes through
 * domain/requestSchemas.ts: the same schemas make the admin part of the OpenAPI document
 * (openapi.ts), and their first problem is the one 400 the caller sees (@tessera/edge's app/inputLists.ts).
 */
export function parseBody<S extends z.ZodType>(schema: S, req: Request): z.output<S> {
  return parseInput(schema, req.body as Record<string, unknown>);
}

/** Query parameters; an empty one (`?limit=`) counts as not given. */
export function parseQuery<S extends z.ZodType>(schema: S, req: Request): z.output<S> {
  const given = Object.entries(req.query as Record<string, unknown>).filter(([, value]) => value !== '' && value !== undefined);
  return parseInput(schema, Object.fromEntries(given));
}

export function parsePath<S extends z.ZodType>(schema: S, req: Request): z.output<S> {
  return parseInput(schema, req.params as Record<string, unknown>);
}

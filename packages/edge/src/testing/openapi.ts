/**
 * What the HTTP services' OpenAPI tests share: the routes an Express app answers, the routes a
 * document lists, and the 3.1 validator (run in a child process).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import type { Express } from 'express';

const ROOT = path.resolve(__dirname, '../../../..');

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

/** Every method + path `express` answers but the web pages named in `notApi` (`GET /dashboard`). */
export function routerRoutes(express: Express, notApi: ReadonlySet<string> = new Set()): string[] {
  return routesOf((express as unknown as { router: { stack: RouteLayer[] } }).router.stack).filter((r) => !notApi.has(r));
}

/** Every method + path of an OpenAPI document, in routerRoutes' form. */
export function documentRoutes(doc: Record<string, unknown>): string[] {
  return Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, ops]) =>
    Object.keys(ops).map((method) => `${method.toUpperCase()} ${p}`),
  );
}

/**
 * The validator is an ES module, which jest's CommonJS runtime cannot load; it runs in a
 * child Node process instead, reading the document from stdin.
 */
export function validateOpenApi(doc: unknown): { valid: boolean; errors?: unknown } {
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

#!/usr/bin/env node
// Writes the route document reference into docs/routes.md, between its routes-reference markers,
// from the zod schema (packages/routes/src/domain/routeDocument.ts, built to dist/).
// Run through `npm run docs:routes`, which builds first. packages/routes/src/domain/routesDoc.test.ts checks it is current.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { withRoutesReference } = createRequire(import.meta.url)(path.join(root, 'packages/routes/dist/domain/routesDoc.js'));
const target = path.join(root, 'docs', 'routes.md');
fs.writeFileSync(target, withRoutesReference(fs.readFileSync(target, 'utf8')));
console.log(`wrote ${path.relative(root, target)}`);

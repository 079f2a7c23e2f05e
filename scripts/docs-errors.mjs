#!/usr/bin/env node
// Writes docs/errors.md from the error catalogue (packages/common/src/errors.ts, built to dist/).
// Run through `npm run docs:errors`, which builds first.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { renderErrorCatalogueMarkdown } = createRequire(import.meta.url)(path.join(root, 'packages/common/dist/errorsDoc.js'));
const target = path.join(root, 'docs', 'errors.md');
fs.writeFileSync(target, renderErrorCatalogueMarkdown());
console.log(`wrote ${path.relative(root, target)}`);

#!/usr/bin/env node
// Writes the event catalogue of docs/webhooks.md (between <!-- events:start --> and <!-- events:end -->)
// from the event types and schemas (packages/merchant-data, built to dist/). Run through
// `npm run docs:events`, which builds first.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { withEventCatalogue } = createRequire(import.meta.url)(path.join(root, 'packages/merchant-data/dist/domain/eventsDoc.js'));
const target = path.join(root, 'docs', 'webhooks.md');
fs.writeFileSync(target, withEventCatalogue(fs.readFileSync(target, 'utf8')));
console.log(`wrote the event catalogue in ${path.relative(root, target)}`);

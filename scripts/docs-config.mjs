#!/usr/bin/env node
// Writes docs/configuration.md from the services' config schemas and their descriptions
// (services/*/src/configDocs.ts, packages/common/src/configDoc.ts), built to dist/.
// Run through `npm run docs:config`, which builds first. test/unit/configurationDoc.test.ts checks it is current.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const load = (file) => createRequire(import.meta.url)(path.join(root, file));
const { renderConfigurationMarkdown } = load('packages/common/dist/configDoc.js');
// The same list, in the same order, as the test.
const sources = [
  {
    service: 'gateway',
    schema: load('services/gateway/dist/config.js').gatewayConfigSchema,
    docs: load('services/gateway/dist/configDocs.js').gatewayConfigDocs,
  },
  {
    service: 'admin',
    schema: load('services/admin/dist/config.js').adminConfigSchema,
    docs: load('services/admin/dist/configDocs.js').adminConfigDocs,
  },
  {
    service: 'vault',
    schema: load('services/vault/dist/config.js').configSchema,
    docs: load('services/vault/dist/configDocs.js').vaultConfigDocs,
  },
  {
    service: 'proxy',
    schema: load('services/proxy/dist/config.js').configSchema,
    docs: load('services/proxy/dist/configDocs.js').proxyConfigDocs,
  },
  {
    service: 'fields',
    schema: load('services/fields/dist/config.js').fieldsConfigSchema,
    docs: load('services/fields/dist/configDocs.js').fieldsConfigDocs,
  },
  {
    service: 'inbound',
    schema: load('services/inbound/dist/config.js').inboundConfigSchema,
    docs: load('services/inbound/dist/configDocs.js').inboundConfigDocs,
  },
];
const target = path.join(root, 'docs', 'configuration.md');
fs.writeFileSync(target, renderConfigurationMarkdown(sources));
console.log(`wrote ${path.relative(root, target)}`);

import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { configSchemaShape, renderConfigurationMarkdown, type DocumentedSchema } from '@tessera/common';
import { gatewayConfigSchema } from '../../services/gateway/src/config';
import { gatewayConfigDocs } from '../../services/gateway/src/configDocs';
import { adminConfigSchema } from '../../services/admin/src/config';
import { adminConfigDocs } from '../../services/admin/src/configDocs';
import { configSchema as vaultConfigSchema } from '../../services/vault/src/config';
import { vaultConfigDocs } from '../../services/vault/src/configDocs';
import { configSchema as proxyConfigSchema } from '../../services/proxy/src/config';
import { proxyConfigDocs } from '../../services/proxy/src/configDocs';
import { fieldsConfigSchema } from '../../services/fields/src/config';
import { fieldsConfigDocs } from '../../services/fields/src/configDocs';
import { inboundConfigSchema } from '../../services/inbound/src/config';
import { inboundConfigDocs } from '../../services/inbound/src/configDocs';

const DOC = path.resolve(__dirname, '../../docs/configuration.md');

// The same list, in the same order, as scripts/docs-config.mjs.
const configDocSources = (): DocumentedSchema[] => [
  { service: 'gateway', schema: gatewayConfigSchema, docs: gatewayConfigDocs },
  { service: 'admin', schema: adminConfigSchema, docs: adminConfigDocs },
  { service: 'vault', schema: vaultConfigSchema, docs: vaultConfigDocs },
  { service: 'proxy', schema: proxyConfigSchema, docs: proxyConfigDocs },
  { service: 'fields', schema: fieldsConfigSchema, docs: fieldsConfigDocs },
  { service: 'inbound', schema: inboundConfigSchema, docs: inboundConfigDocs },
];

describe('docs/configuration.md', () => {
  it("matches the services' config schemas (run `npm run docs:config` after changing a config.ts or configDocs.ts)", () => {
    expect(fs.readFileSync(DOC, 'utf8')).toBe(renderConfigurationMarkdown(configDocSources()));
  });

  it('has a row for every variable of every schema', () => {
    const markdown = renderConfigurationMarkdown(configDocSources());
    for (const { schema } of configDocSources()) {
      for (const name of Object.keys(configSchemaShape(schema))) expect(markdown).toContain(`| \`${name}\` |`);
    }
  });

  it('refuses a schema variable nobody described, and a description of no variable', () => {
    const schema = z.object({ DOCUMENTED: z.string().default('x'), NEW_SETTING: z.string().optional() });
    expect(() => renderConfigurationMarkdown([{ service: 'svc', schema, docs: { DOCUMENTED: { text: 'yes' } } }], {})).toThrow(
      /svc: NEW_SETTING has no description/,
    );
    expect(() =>
      renderConfigurationMarkdown(
        [{ service: 'svc', schema, docs: { DOCUMENTED: { text: 'yes' }, NEW_SETTING: { text: 'y' }, GONE: { text: 'old' } } }],
        {},
      ),
    ).toThrow(/GONE is described but not in the schema/);
  });
});

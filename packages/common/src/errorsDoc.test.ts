import fs from 'node:fs';
import path from 'node:path';
import { ERROR_CATALOGUE } from './errors';
import { renderErrorCatalogueMarkdown } from './errorsDoc';

const DOC = path.resolve(__dirname, '../../../docs/errors.md');

describe('docs/errors.md', () => {
  it('matches the error catalogue in the code (run `npm run docs:errors` after changing errors.ts)', () => {
    expect(fs.readFileSync(DOC, 'utf8')).toBe(renderErrorCatalogueMarkdown());
  });

  it('has a row for every code and advice for every type', () => {
    const markdown = renderErrorCatalogueMarkdown();
    for (const [code, spec] of Object.entries(ERROR_CATALOGUE)) {
      expect(markdown).toContain(`| ${spec.status} | \`${code}\` |`);
      expect(markdown).toMatch(new RegExp(`\\| \`${spec.type}\` \\| \\S`));
    }
  });
});

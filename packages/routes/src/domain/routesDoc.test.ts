import fs from 'node:fs';
import path from 'node:path';
import { renderRoutesReference, ROUTES_REFERENCE_END, ROUTES_REFERENCE_START, withRoutesReference } from './routesDoc';

const DOC = path.resolve(__dirname, '../../../../docs/routes.md');

describe('docs/routes.md', () => {
  it('holds the route document reference made from the schema (run `npm run docs:routes` after changing routeDocument.ts)', () => {
    const doc = fs.readFileSync(DOC, 'utf8');
    expect(doc).toBe(withRoutesReference(doc));
  });

  it('has a row for every field and a section for every filter location', () => {
    const reference = renderRoutesReference();
    for (const field of [
      'id',
      'kind',
      'mode',
      'inbound',
      'outbound',
      'filters',
      'unmatchedCardData',
      'upstream',
      'hosts',
      'pointer',
      'field',
      'pattern',
      'store',
      'aliasFormat',
    ]) {
      expect(reference).toContain(`| \`${field}\` |`);
    }
    for (const location of ['json', 'form', 'text']) expect(reference).toContain(`location: ${location}`);
    expect(reference.startsWith(ROUTES_REFERENCE_START)).toBe(true);
    expect(reference.endsWith(ROUTES_REFERENCE_END)).toBe(true);
  });

  it('refuses a document without the markers rather than writing the reference somewhere', () => {
    expect(() => withRoutesReference('# Routes\n')).toThrow(/markers/);
  });
});

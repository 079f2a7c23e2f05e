import fs from 'node:fs';
import path from 'node:path';
import { EVENT_TYPES } from './eventTypes';
import { eventObjectFields, EVENTS_DOC_END, EVENTS_DOC_START, renderEventCatalogueMarkdown, withEventCatalogue } from './eventsDoc';

const DOC = path.resolve(__dirname, '../../../../docs/webhooks.md');

describe('the event catalogue in docs/webhooks.md', () => {
  it('matches the event types and schemas in the code (run `npm run docs:events` after changing them)', () => {
    const doc = fs.readFileSync(DOC, 'utf8');
    expect(doc).toContain('## Event catalogue');
    expect(doc).toBe(withEventCatalogue(doc));
  });

  it('has a row for every type, with the fields its schema accepts', () => {
    const markdown = renderEventCatalogueMarkdown();
    for (const type of EVENT_TYPES) expect(markdown).toContain(`| \`${type}\` |`);
    expect(eventObjectFields('token.created')).toEqual([
      '`id` (string)',
      '`brand` (string, optional)',
      '`last4` (string, optional)',
      '`expiryMonth` (integer 1..12, optional)',
      '`expiryYear` (integer 2000..2200, optional)',
    ]);
    expect(eventObjectFields('api_key.created')).toContain('`mode` ("test" or "live")');
    expect(eventObjectFields('card_testing.suspected')).toEqual([
      '`keyId` (string)',
      '`attempts` (integer ≥ 0)',
      '`windowSeconds` (integer ≥ 1)',
    ]);
  });

  it('replaces only the section between the markers, and refuses a document without them', () => {
    const doc = `# T\n\nbefore\n${EVENTS_DOC_START}\nstale\n${EVENTS_DOC_END}\nafter\n`;
    const updated = withEventCatalogue(doc);
    expect(updated.startsWith('# T\n\nbefore\n')).toBe(true);
    expect(updated.endsWith('\nafter\n')).toBe(true);
    expect(updated).not.toContain('stale');
    expect(() => withEventCatalogue('# no markers')).toThrow(/events:start/);
  });
});

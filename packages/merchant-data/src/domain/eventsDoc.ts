import { z } from 'zod';
import { EVENT_TYPES, type EventType } from './eventTypes';
import { EVENT_OBJECT_SCHEMAS } from './events';

/**
 * The event catalogue of docs/webhooks.md, generated from EVENT_TYPES and EVENT_OBJECT_SCHEMAS
 * (`npm run docs:events`; a unit test fails when the committed section is stale), so the types and
 * fields a merchant reads about are the ones the schemas let through.
 */

export const EVENTS_DOC_START = '<!-- events:start -->';
export const EVENTS_DOC_END = '<!-- events:end -->';

/** When each type is recorded; a Record so a new type cannot be added without saying when. */
const WHEN: Record<EventType, string> = {
  'form_session.completed': 'A shopper finished a hosted payment page (the session holds the token).',
  'form_session.expired': 'A hosted payment page passed its deadline without a card.',
  'token.created': 'A merchant server made a token (POST /v1/token with a secret key; an existing token answered by dedupe is not new).',
  'token.updated': "A token's expiry or holder name was changed (PATCH /v1/token/{token}).",
  'token.retained': 'A token made in a browser (provisional) was retained by the merchant (POST /v1/token/{token}/retain).',
  'token.deleted': 'A token was deleted (DELETE /v1/token/{token}).',
  'token.expiring_soon': "A stored card's expiry month ends soon (a daily sweep).",
  'cvv.expired_unused': 'A CVV attached to a token expired before any render used it.',
  'api_key.created': 'An API key was created.',
  'api_key.revoked': 'An API key was revoked.',
  'api_key.expiring_soon': 'An API key reaches its expiry soon.',
  'card_testing.suspected': "A key's card-testing limit was exceeded.",
  'webhook_endpoint.disabled': 'Deliveries to a webhook endpoint kept failing, so it was disabled.',
  'merchant.shredded':
    "A merchant's mode was crypto-shredded after two operators approved it: its key was destroyed (every token unreadable from then on) and its records swept.",
};

interface JsonSchemaProperty {
  type?: string;
  enum?: unknown[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
}

function describeField(property: JsonSchemaProperty): string {
  if (property.enum) return property.enum.map((v) => JSON.stringify(v)).join(' or ');
  // zod gives every integer Number.MAX_SAFE_INTEGER as its ceiling: no limit worth printing.
  const maximum = property.maximum !== undefined && property.maximum < Number.MAX_SAFE_INTEGER ? property.maximum : undefined;
  if (property.type === 'integer' && property.minimum !== undefined && maximum !== undefined) {
    return `integer ${property.minimum}..${maximum}`;
  }
  if (property.type === 'integer' && property.minimum !== undefined) return `integer ≥ ${property.minimum}`;
  return property.type ?? 'value';
}

/** `name` (kind[, optional]) for each field of the type's object, in the schema's order. */
export function eventObjectFields(type: EventType): string[] {
  const schema = z.toJSONSchema(EVENT_OBJECT_SCHEMAS[type], { unrepresentable: 'any' }) as {
    properties?: Record<string, JsonSchemaProperty>;
    required?: string[];
  };
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(
    ([name, property]) => `\`${name}\` (${describeField(property)}${required.has(name) ? '' : ', optional'})`,
  );
}

/** The section between the markers, markers included. */
export function renderEventCatalogueMarkdown(): string {
  const rows = EVENT_TYPES.map((type) => `| \`${type}\` | ${WHEN[type]} | ${eventObjectFields(type).join(', ')} |`);
  return [
    EVENTS_DOC_START,
    '<!-- Generated from packages/merchant-data/src/domain/eventTypes.ts and events.ts by `npm run docs:events`. Do not edit by hand. -->',
    '',
    '| Type | When | `data.object` fields |',
    '|------|------|----------------------|',
    ...rows,
    '',
    'No other field is accepted: an object with an unknown field, or any string with a run of 12 or more digits, is refused',
    'before it is recorded, so no card number can reach an event.',
    EVENTS_DOC_END,
  ].join('\n');
}

/** `doc` with its catalogue section replaced; throws when the markers are missing. */
export function withEventCatalogue(doc: string): string {
  const start = doc.indexOf(EVENTS_DOC_START);
  const end = doc.indexOf(EVENTS_DOC_END);
  if (start < 0 || end < start) throw new Error(`docs/webhooks.md has no ${EVENTS_DOC_START} … ${EVENTS_DOC_END} section`);
  return doc.slice(0, start) + renderEventCatalogueMarkdown() + doc.slice(end + EVENTS_DOC_END.length);
}

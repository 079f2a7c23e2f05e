import { z } from 'zod';
import { EVENT_TYPES, type EventType } from './eventTypes';
import { randomId } from './randomIds';

/**
 * Events as records (issue 27, item 1). Each type's object is a strict zod schema holding only what
 * a merchant may see without PCI scope: token ids, brand, last4 and expiry at most, never a card
 * number or CVV. Strict objects refuse unknown fields, and every string refuses a run of 12 or
 * more digits, so a PAN cannot reach an event even under a field name we allow.
 */
const PAN_LIKE = /\d[\d -]{10,}\d/;
const safeString = (pattern: RegExp) =>
  z
    .string()
    .max(200)
    .regex(pattern)
    .refine((value) => !PAN_LIKE.test(value), 'must not hold a card-number-like value');

const objectId = safeString(/^[a-z]+_[A-Za-z0-9_-]{4,80}$/);
/**
 * A token as the vault issues it (`tok.` + base64url, services/vault/src/domain/token.ts), or an
 * id of the general shape. Only token objects take the dotted form; the PAN-like refusal still applies.
 */
const tokenId = safeString(/^(?:[a-z]+_[A-Za-z0-9_-]{4,80}|tok\.[A-Za-z0-9_-]{16,128})$/);

const tokenObject = z.strictObject({
  id: tokenId,
  brand: safeString(/^[a-z_]{1,32}$/).optional(),
  last4: z
    .string()
    .regex(/^\d{4}$/)
    .optional(),
  expiryMonth: z.number().int().min(1).max(12).optional(),
  expiryYear: z.number().int().min(2000).max(2200).optional(),
});
const formSessionObject = z.strictObject({ id: objectId, status: safeString(/^[a-z_]{1,32}$/) });
/**
 * A completed session names its token (the merchant's server retains it) and, with a completion
 * call, the payment's outcome as the page's return URL carries it: `unknown` means the merchant
 * settles it from its own records. Brand and last4 only, as the session's own GET shows them.
 */
const completedFormSessionObject = z.strictObject({
  id: objectId,
  status: z.literal('completed'),
  token: tokenId.optional(),
  brand: safeString(/^[a-z_]{1,32}$/).optional(),
  last4: z
    .string()
    .regex(/^\d{4}$/)
    .optional(),
  payment: z.enum(['succeeded', 'declined', 'unknown']).optional(),
});
const apiKeyObject = z.strictObject({
  id: objectId,
  kind: safeString(/^[a-z_]{1,32}$/),
  mode: z.enum(['test', 'live']),
});
/** The token whose CVV expired before any proxy call used it (the CVV itself is gone: only its expiry is told). */
const cvcSessionObject = z.strictObject({
  id: objectId.or(tokenId),
  token: tokenId.optional(),
  expiredAt: z.number().int().min(0).optional(),
});
/**
 * The key that tripped the card-testing guard (its id, never the key), how many browser
 * tokenizations it saw in the window that tripped it, and how long challenges stay on.
 */
const cardTestingObject = z.strictObject({
  keyId: objectId,
  attempts: z.number().int().min(0),
  windowSeconds: z.number().int().min(1),
});

// The endpoint's id and why delivery stopped; never its URL (it may hold a path the merchant keeps private) or a response.
const webhookEndpointObject = z.strictObject({
  id: objectId,
  status: safeString(/^[a-z_]{1,32}$/),
  failingSince: z.number().int().min(0).optional(),
});

/**
 * A merchant's mode was crypto-shredded (issue 29): its key was destroyed, then its records swept.
 * The shred order's id (from the admin API), when the key was destroyed and how many tokens the
 * order's sweep removed (all its modes together); never a key id or anything of a card.
 */
const merchantShreddedObject = z.strictObject({
  id: objectId,
  keyDestroyedAt: z.number().int().min(0),
  tokensSwept: z.number().int().min(0),
});

export const EVENT_OBJECT_SCHEMAS: Record<EventType, z.ZodType> = {
  'form_session.completed': completedFormSessionObject,
  'form_session.expired': formSessionObject,
  'token.created': tokenObject,
  'token.updated': tokenObject,
  'token.retained': tokenObject,
  'token.deleted': tokenObject,
  'token.expiring_soon': tokenObject,
  'cvv.expired_unused': cvcSessionObject,
  'api_key.created': apiKeyObject,
  'api_key.revoked': apiKeyObject,
  'api_key.expiring_soon': apiKeyObject,
  'card_testing.suspected': cardTestingObject,
  'webhook_endpoint.disabled': webhookEndpointObject,
  'merchant.shredded': merchantShreddedObject,
};

export interface EventRecord {
  id: string;
  type: EventType;
  /** Unix seconds. */
  created: number;
  merchantId: string;
  mode: 'test' | 'live';
  data: { object: Record<string, unknown> };
}

export const EVENT_ID_PATTERN = /^evt_[A-Za-z0-9_-]{16}$/;

export function newEventId(): string {
  return randomId('evt_');
}

/** Builds a record, or throws if the object does not fit its type's schema (never echoing it). */
export function buildEvent(input: {
  type: EventType;
  merchantId: string;
  mode: 'test' | 'live';
  object: Record<string, unknown>;
  now?: Date;
}): EventRecord {
  if (!(EVENT_TYPES as readonly string[]).includes(input.type)) throw new Error('unknown event type');
  const parsed = EVENT_OBJECT_SCHEMAS[input.type].safeParse(input.object);
  if (!parsed.success) throw new Error(`event object does not fit the ${input.type} schema`);
  return {
    id: newEventId(),
    type: input.type,
    created: Math.floor((input.now ?? new Date()).getTime() / 1000),
    merchantId: input.merchantId,
    mode: input.mode,
    data: { object: parsed.data as Record<string, unknown> },
  };
}

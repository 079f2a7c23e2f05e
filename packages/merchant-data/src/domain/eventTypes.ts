/**
 * The event types Tessera records and delivers to webhook endpoints (issue 27). One list, shared by
 * the events themselves, the endpoints' `enabledEvents` and the generated catalogue in
 * docs/webhooks.md: a type not listed here can be neither emitted nor subscribed to.
 */
export const EVENT_TYPES = [
  'form_session.completed',
  'form_session.expired',
  'token.created',
  'token.updated',
  'token.retained',
  'token.deleted',
  'token.expiring_soon',
  'cvv.expired_unused',
  'api_key.created',
  'api_key.revoked',
  'api_key.expiring_soon',
  'card_testing.suspected',
  'webhook_endpoint.disabled',
  'merchant.shredded',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && (EVENT_TYPES as readonly string[]).includes(value);
}

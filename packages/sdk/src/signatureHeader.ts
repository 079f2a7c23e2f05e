import crypto from 'node:crypto';

/**
 * The one `Tessera-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 over "<t>.<raw body>">` check,
 * shared by webhook deliveries (webhooks.constructEvent) and the hosted page's completion call
 * (verifyCompletionSignature), so the two cannot drift apart. Each caller wraps a failure in its own
 * error class; the reason codes and messages come from here.
 */

/** Why a signed call was refused. */
export type SignatureFailureReason =
  | 'secret_missing'
  | 'body_not_raw'
  | 'header_missing'
  | 'header_repeated'
  | 'header_malformed'
  | 'timestamp_invalid'
  | 'no_v1_signature'
  | 'signature_mismatch'
  | 'timestamp_too_old'
  | 'timestamp_in_future';

export interface SignatureFailure {
  reason: SignatureFailureReason;
  message: string;
}

/** A signed call from the future is refused past this, so a clock a little ahead does not break receivers. */
const FUTURE_ALLOWANCE_MS = 60_000;

/** The hex HMAC-SHA256 over `${t}.${rawBody}`. */
export function signatureOf(secret: string, rawBody: string, timestampSeconds: number): string {
  return crypto.createHmac('sha256', secret).update(`${timestampSeconds}.${rawBody}`).digest('hex');
}

/** The header value Tessera sends, one v1 per secret (several while a secret is rotated). */
export function signatureHeaderOf(secrets: string | readonly string[], rawBody: string, timestampSeconds: number): string {
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  return [`t=${timestampSeconds}`, ...list.map((secret) => `v1=${signatureOf(secret, rawBody, timestampSeconds)}`)].join(',');
}

/** The body as the signed text, or undefined when it is not a string or bytes (a parsed object, say). */
export function rawBodyText(rawBody: unknown): string | undefined {
  if (typeof rawBody === 'string') return rawBody;
  if (rawBody instanceof Uint8Array) return Buffer.from(rawBody).toString('utf8');
  return undefined;
}

export interface CheckSignatureOptions {
  /** Oldest call accepted, in seconds (default 300): a recorded call replayed later is refused. */
  toleranceSeconds?: number;
  now?: Date;
}

/**
 * Checks the header against the body with the secret in constant time. Returns the body text when it
 * matches, otherwise the reason. Never throws and never puts the secret or the body into a message.
 */
export function checkSignature(
  rawBody: unknown,
  header: unknown,
  secret: unknown,
  options: CheckSignatureOptions = {},
): { ok: true; body: string } | ({ ok: false } & SignatureFailure) {
  const fail = (reason: SignatureFailureReason, message: string) => ({ ok: false as const, reason, message });
  if (typeof secret !== 'string' || secret === '') return fail('secret_missing', 'the signing secret is missing');
  const body = rawBodyText(rawBody);
  if (body === undefined) {
    return fail(
      'body_not_raw',
      'the raw request body is needed (a string or Buffer, e.g. express.raw({ type: "application/json" })): ' +
        'a parsed and re-serialised object does not keep the signed bytes',
    );
  }
  if (Array.isArray(header)) return fail('header_repeated', 'the Tessera-Signature header is repeated');
  if (typeof header !== 'string' || header.trim() === '') return fail('header_missing', 'the Tessera-Signature header is missing');
  const parts = new Map<string, string[]>();
  for (const item of header.split(',')) {
    const at = item.indexOf('=');
    if (at <= 0) return fail('header_malformed', 'the Tessera-Signature header is malformed (expected t=<unix>,v1=<hex>)');
    const name = item.slice(0, at).trim();
    parts.set(name, [...(parts.get(name) ?? []), item.slice(at + 1).trim()]);
  }
  const timestamps = parts.get('t') ?? [];
  if (timestamps.length !== 1 || !/^\d{1,12}$/.test(timestamps[0] as string)) {
    return fail('timestamp_invalid', 'the Tessera-Signature header has no single valid timestamp (t=<unix seconds>)');
  }
  const signatures = (parts.get('v1') ?? []).filter((s) => /^[0-9a-f]{64}$/.test(s));
  if (signatures.length === 0) return fail('no_v1_signature', 'the Tessera-Signature header has no v1 signature');
  const timestamp = Number(timestamps[0]);
  const expected = Buffer.from(signatureOf(secret, body, timestamp), 'hex');
  // Several v1 values come while a secret is rotated; one matching is enough. Every one is compared.
  let matches = false;
  for (const s of signatures) matches = crypto.timingSafeEqual(expected, Buffer.from(s, 'hex')) || matches;
  if (!matches) return fail('signature_mismatch', 'signature does not match (wrong signing secret or mode, or the body was changed)');
  const nowMs = (options.now ?? new Date()).getTime();
  const toleranceMs = (options.toleranceSeconds ?? 300) * 1000;
  if (nowMs - timestamp * 1000 > toleranceMs) return fail('timestamp_too_old', 'the call is too old (outside the tolerance)');
  if (timestamp * 1000 - nowMs > FUTURE_ALLOWANCE_MS) return fail('timestamp_in_future', 'the call is dated in the future');
  return { ok: true, body };
}

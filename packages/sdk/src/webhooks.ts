import { checkSignature, signatureHeaderOf, type CheckSignatureOptions, type SignatureFailureReason } from './signatureHeader';
import { TesseraSdkError } from './errors';

/**
 * Verifying webhook deliveries (docs/webhooks.md, "Verifying signatures"). A delivery is
 * `POST <url>` with `Tessera-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 over "<t>.<raw body>">`,
 * one v1 per valid secret of the endpoint (several while a secret is rotated), and the event as body.
 */
export const WEBHOOK_SIGNATURE_HEADER = 'tessera-signature';

/** Why constructEvent refused a delivery: every kind of mismatch has its own code. */
export type WebhookSignatureFailureReason = SignatureFailureReason | 'body_not_json';

export class WebhookSignatureError extends TesseraSdkError {
  constructor(
    readonly reason: WebhookSignatureFailureReason,
    message: string,
  ) {
    super(`webhooks.constructEvent: ${message}`);
  }
}

/** The body of a delivery, as docs/webhooks.md describes it. */
export interface WebhookEvent<TObject = Record<string, unknown>> {
  /** `evt_…`: the same id on every retry, so a receiver can de-duplicate. */
  id: string;
  type: string;
  /** Unix seconds. */
  created: number;
  mode: 'test' | 'live';
  data: { object: TObject };
}

export type ConstructEventOptions = CheckSignatureOptions;

/**
 * Checks a delivery's signature (constant time, any one matching v1 accepted) and its age
 * (`toleranceSeconds`, default 300), then returns the parsed event. Throws WebhookSignatureError with
 * a `reason` for every refusal, including a parsed body passed by mistake and a missing secret.
 */
export function constructEvent<TObject = Record<string, unknown>>(
  rawBody: string | Uint8Array,
  signatureHeader: string | string[] | null | undefined,
  secret: string,
  options: ConstructEventOptions = {},
): WebhookEvent<TObject> {
  const checked = checkSignature(rawBody, signatureHeader, secret, options);
  if (!checked.ok) {
    const hint =
      checked.reason === 'secret_missing'
        ? " (pass the endpoint's whsec_… secret, shown when it was created or rotated, e.g. from an environment variable that is set)"
        : '';
    throw new WebhookSignatureError(checked.reason, checked.message + hint);
  }
  try {
    return JSON.parse(checked.body) as WebhookEvent<TObject>;
  } catch {
    throw new WebhookSignatureError('body_not_json', 'the body is not JSON');
  }
}

/**
 * The Tessera-Signature header for a body, as a delivery carries it: for tests of a receiver.
 * `t` is unix seconds (default now).
 */
export function signWebhookPayload(secret: string | readonly string[], body: string, t: number = Math.floor(Date.now() / 1000)): string {
  return signatureHeaderOf(secret, body, t);
}

export const webhooks = { constructEvent, signWebhookPayload, WebhookSignatureError } as const;

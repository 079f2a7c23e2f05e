import crypto from 'node:crypto';

/**
 * Verifying the hosted payment page's redirect. After the shopper pays (or cancels), Tessera sends
 * the browser to the merchant's registered return (or cancel) URL, with the merchant's own query
 * kept and `session=fs_…&status=completed|canceled&timestamp=<unix seconds>&signature=<hex>` added
 * (and `payment=succeeded|unknown` for a session with a completionUrl).
 * The signature covers the whole URL: signature = HMAC-SHA256(signingSecret,
 * formSessionReturnPayload(url)), so neither the outcome nor any parameter of the merchant's own
 * (`order=42&amount=1`) can be changed, added or removed. The signing secret is per merchant and
 * mode (`npm run keys -- return-urls secret`, or the dashboard).
 */
export interface FormSessionReturn {
  sessionId: string;
  status: 'completed' | 'canceled';
  /**
   * Only for a session with a completionUrl: `succeeded` (your completion endpoint charged the
   * card) or `unknown` (it did not answer a known outcome in time: check your own records for the
   * attempt's Idempotency-Key before fulfilling or charging again). Undefined otherwise.
   */
  payment?: 'succeeded' | 'unknown';
  /** When Tessera signed the redirect. */
  signedAt: Date;
  /**
   * The return URL's own query, as the form session named it (Tessera's four parameters removed),
   * covered by the signature: read `order` and the like from here, not from the raw request.
   */
  query: URLSearchParams;
}

export interface VerifyFormSessionReturnOptions {
  /** The merchant's signing secret for the mode of the key that created the session (`fss_test_…` / `fss_live_…`). */
  signingSecret: string;
  /**
   * `https://shop.example`: the scheme, host and port of the return URL, needed when `url` is only
   * a path and query (Express's `req.originalUrl`, Node's `req.url`), which is all a server behind a
   * proxy can trust. The signature covers them too, so give the registered URL's, not the Host header.
   */
  origin?: string;
  /** Oldest redirect accepted, in seconds (default 600): an old link replayed later is refused. */
  toleranceSeconds?: number;
  now?: Date;
}

export class FormSessionReturnError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FormSessionReturnError';
  }
}

const SESSION_ID = /^fs_[A-Za-z0-9_-]{32}$/;
/** The parameters Tessera adds to the return URL; every other one is the merchant's. */
const RETURN_PARAMETERS = ['session', 'status', 'payment', 'timestamp', 'signature'] as const;
const PAYLOAD_LABEL = 'tessera form-session return v2';

/**
 * What is signed for a return redirect: a label, then the URL without its `signature` in canonical
 * form: `scheme://host[:port]/path?` and every query parameter, decoded and re-encoded
 * (`application/x-www-form-urlencoded`) and sorted by name (values of one name keep their order).
 * So two spellings of one query (`%20` or `+`, another order of names) verify alike, and a
 * parameter changed, added, removed or repeated does not; the fragment never reaches a server.
 * Tessera's gateway signs with this very function.
 */
export function formSessionReturnPayload(url: URL): string {
  const params = new URLSearchParams(url.search);
  params.delete('signature');
  params.sort();
  return `${PAYLOAD_LABEL}\n${url.origin}${url.pathname}?${params.toString()}`;
}

/** HMAC-SHA256 of formSessionReturnPayload, in hex: the `signature` parameter. */
export function signFormSessionReturn(signingSecret: string, url: URL): string {
  return crypto.createHmac('sha256', signingSecret).update(formSessionReturnPayload(url)).digest('hex');
}

function returnUrlOf(input: unknown, origin: string | undefined): URL {
  if (input instanceof URL) return new URL(input.href);
  if (typeof input !== 'string') {
    throw new TypeError(
      'verifyFormSessionReturn needs the whole return URL (a string or URL, e.g. req.originalUrl with options.origin): ' +
        'the signature covers its path and every query parameter, not the query alone.',
    );
  }
  if (URL.canParse(input)) return new URL(input);
  if (origin === undefined || !URL.canParse(origin)) {
    throw new TypeError(
      'verifyFormSessionReturn got a path without scheme and host: pass options.origin, the scheme://host[:port] of your return URL.',
    );
  }
  return new URL(input, origin);
}

/**
 * Checks the signature (constant time) and age of a return redirect and returns what it says,
 * with the merchant's own query it covers. Throws FormSessionReturnError when the redirect is not
 * one Tessera signed (or is too old), and TypeError when called wrongly (no secret, no URL). A valid
 * signature proves Tessera sent the shopper to exactly this URL; read the token with
 * GET /v1/form-sessions/{id} (and retain it) on the server, never from the URL.
 */
export function verifyFormSessionReturn(url: string | URL, options: VerifyFormSessionReturnOptions): FormSessionReturn {
  const signingSecret: unknown = options?.signingSecret;
  if (typeof signingSecret !== 'string' || signingSecret === '') {
    throw new TypeError(
      'verifyFormSessionReturn: options.signingSecret is missing. Pass the form signing secret of the mode ' +
        '(fss_test_… or fss_live_…; npm run keys -- return-urls secret), e.g. from an environment variable that is set.',
    );
  }
  const target = returnUrlOf(url, options.origin);
  const params = target.searchParams;
  const sessionId = params.get('session') ?? '';
  const status = params.get('status') ?? '';
  const timestamp = params.get('timestamp') ?? '';
  const signature = params.get('signature') ?? '';
  if (!SESSION_ID.test(sessionId)) throw new FormSessionReturnError('missing or malformed "session"');
  if (status !== 'completed' && status !== 'canceled') throw new FormSessionReturnError('missing or unknown "status"');
  const payment = params.get('payment');
  if (payment !== null && payment !== 'succeeded' && payment !== 'unknown') throw new FormSessionReturnError('unknown "payment"');
  if (!/^\d{1,12}$/.test(timestamp)) throw new FormSessionReturnError('missing or malformed "timestamp"');
  if (!/^[0-9a-f]{64}$/.test(signature)) throw new FormSessionReturnError('missing or malformed "signature"');
  // Tessera sets each once: a second one would be read differently by different frameworks.
  const repeated = RETURN_PARAMETERS.find((name) => params.getAll(name).length > 1);
  if (repeated !== undefined) throw new FormSessionReturnError(`"${repeated}" is repeated`);
  const expected = Buffer.from(signFormSessionReturn(signingSecret, target), 'hex');
  if (!crypto.timingSafeEqual(expected, Buffer.from(signature, 'hex'))) throw new FormSessionReturnError('signature does not match');
  const signedAtMs = Number(timestamp) * 1000;
  const now = (options.now ?? new Date()).getTime();
  const toleranceMs = (options.toleranceSeconds ?? 600) * 1000;
  if (now - signedAtMs > toleranceMs) throw new FormSessionReturnError('the redirect is too old');
  if (signedAtMs - now > 60_000) throw new FormSessionReturnError('the redirect is dated in the future');
  const query = new URLSearchParams(target.search);
  for (const name of RETURN_PARAMETERS) query.delete(name);
  return { sessionId, status, ...(payment !== null ? { payment } : {}), signedAt: new Date(signedAtMs), query };
}

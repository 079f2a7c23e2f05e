import crypto from 'node:crypto';

/**
 * Verifying the hosted payment page's redirect. After the shopper pays (or cancels), Tessera sends
 * the browser to the merchant's registered return (or cancel) URL with
 * `?session=fs_…&status=completed|canceled&timestamp=<unix seconds>&signature=<hex>`, where
 * signature = HMAC-SHA256(signingSecret, `${session}.${status}.${timestamp}`). The signing secret
 * is per merchant and mode (`npm run keys -- return-urls secret`, or the dashboard).
 */
export interface FormSessionReturn {
  sessionId: string;
  status: 'completed' | 'canceled';
  /** When Tessera signed the redirect. */
  signedAt: Date;
}

export interface VerifyFormSessionReturnOptions {
  /** The merchant's signing secret for the mode of the key that created the session (`fss_test_…` / `fss_live_…`). */
  signingSecret: string;
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

function paramsOf(input: string | URL | URLSearchParams | Record<string, unknown>): URLSearchParams {
  if (input instanceof URLSearchParams) return input;
  if (input instanceof URL) return input.searchParams;
  if (typeof input === 'string') {
    // A full URL, a path with a query (req.url in Express/Node), or a bare query string.
    const query = input.includes('?') ? input.slice(input.indexOf('?') + 1) : input;
    return new URLSearchParams(query.split('#', 1)[0]);
  }
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(input)) if (typeof value === 'string') params.set(name, value);
  return params;
}

/**
 * Checks the signature (constant time) and age of a return redirect and returns what it says.
 * Throws FormSessionReturnError otherwise. A valid signature proves Tessera sent the shopper; read
 * the token with GET /v1/form-sessions/{id} (and retain it) on the server, never from the URL.
 */
export function verifyFormSessionReturn(
  query: string | URL | URLSearchParams | Record<string, unknown>,
  options: VerifyFormSessionReturnOptions,
): FormSessionReturn {
  const params = paramsOf(query);
  const sessionId = params.get('session') ?? '';
  const status = params.get('status') ?? '';
  const timestamp = params.get('timestamp') ?? '';
  const signature = params.get('signature') ?? '';
  if (!SESSION_ID.test(sessionId)) throw new FormSessionReturnError('missing or malformed "session"');
  if (status !== 'completed' && status !== 'canceled') throw new FormSessionReturnError('missing or unknown "status"');
  if (!/^\d{1,12}$/.test(timestamp)) throw new FormSessionReturnError('missing or malformed "timestamp"');
  if (!/^[0-9a-f]{64}$/.test(signature)) throw new FormSessionReturnError('missing or malformed "signature"');
  const expected = crypto.createHmac('sha256', options.signingSecret).update(`${sessionId}.${status}.${timestamp}`).digest();
  if (!crypto.timingSafeEqual(expected, Buffer.from(signature, 'hex'))) throw new FormSessionReturnError('signature does not match');
  const signedAtMs = Number(timestamp) * 1000;
  const now = (options.now ?? new Date()).getTime();
  const toleranceMs = (options.toleranceSeconds ?? 600) * 1000;
  if (now - signedAtMs > toleranceMs) throw new FormSessionReturnError('the redirect is too old');
  if (signedAtMs - now > 60_000) throw new FormSessionReturnError('the redirect is dated in the future');
  return { sessionId, status, signedAt: new Date(signedAtMs) };
}

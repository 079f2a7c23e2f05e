import pino, { type Logger } from 'pino';
import { maskCardNumbers } from './card/cardNumberLike';
import { stdoutDestination } from './logDestination';

export type { Logger };

/**
 * Every field that could carry card data or key material, at the top level and one level down.
 * pino removes them before serialising, so no log line ever holds a PAN, CVV or key.
 */
const SENSITIVE_FIELDS = [
  'number',
  'cardNumber',
  'pan',
  'cvv',
  'cvc',
  'holderName',
  'pspBody',
  'body',
  'template',
  'rendered',
  'apiKey',
  'api_key',
  'key',
  'secret',
  'pepper',
  'vaultKeys',
  // An HSM's crypto user PIN (PKCS11_PIN); the config holds it as a Secret that prints redacted anyway.
  'pin',
  'PKCS11_PIN',
  'authorization',
  'x-api-key',
  'cookie',
  // A Redis URL may carry its user's password (redis://user:pass@host).
  'password',
  'redisUrl',
  'REDIS_URL',
];

const CENSOR = '[REDACTED]';
const SENSITIVE = new Set(SENSITIVE_FIELDS);

function isDescendable(key: string, value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Buffer.isBuffer(value)) return false;
  // An error under `err` or `error` goes through serializeError, which keeps only safe fields
  // (never e.g. body-parser's `body`) and needs the Error itself; anywhere else it is an object.
  return !((key === 'err' || key === 'error') && value instanceof Error);
}

/** `fields` with every sensitive key censored; the same object when there is none (no copy). */
function censorKeys(fields: Record<string, unknown>, depth: number): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const key in fields) {
    if (!Object.prototype.hasOwnProperty.call(fields, key)) continue;
    const value = fields[key];
    let next: unknown = value;
    if (SENSITIVE.has(key)) next = CENSOR;
    // The last line of defence: a card number in any string value (a request id, a host, a
    // caller's header name) is masked even where the code that logged it did not expect one.
    else if (typeof value === 'string') next = maskCardNumbers(value);
    // One level down, plus the header maps of a request or response (`req.headers.authorization`).
    else if (isDescendable(key, value) && (depth > 0 || key === 'headers')) next = censorKeys(value, depth - 1);
    if (next !== value) (out ??= { ...fields })[key] = next;
  }
  return out ?? fields;
}

/**
 * Nested redaction for every log line: each field named in SENSITIVE_FIELDS one level down (and
 * in `headers` maps, e.g. `req.headers.authorization`) becomes "[REDACTED]", and a card-number-like
 * run in any other string value at those levels becomes "[redacted]" (maskCardNumbers; strings with
 * fewer than 12 digits, nearly all of them, cost one pass over their characters), without changing
 * the caller's objects. pino's own `redact` handles the top level (of lines and of child bindings),
 * where it is cheap. Its wildcard paths (`*.pan`) could do this part too, but run every value of
 * every line through every path: ~11 µs per line and most of a service's garbage, against ~0.1 µs.
 */
export function redactLogFields(fields: Record<string, unknown>): Record<string, unknown> {
  return censorKeys(fields, 1);
}

/** The redaction options of every Tessera logger, also for tests and tools that build their own pino. */
export const LOG_REDACTION = {
  redact: { paths: SENSITIVE_FIELDS, censor: CENSOR },
  formatters: { log: redactLogFields },
};

function serializeError(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: maskCardNumbers(String(err)) };
  const out: Record<string, unknown> = {
    type: err.name,
    message: maskCardNumbers(err.message),
  };
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' || typeof code === 'number') out.code = code;
  if (err.stack) out.stack = maskCardNumbers(err.stack);
  if (err.cause !== undefined) out.cause = serializeError(err.cause);
  return out;
}

/** `destination` is for tests that read the lines; services write to stdout. */
export function createLogger(service: string, level: string = 'info', destination?: pino.DestinationStream): Logger {
  return pino(
    {
      name: service,
      level,
      base: { service },
      ...LOG_REDACTION,
      serializers: { err: serializeError, error: serializeError },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination ?? stdoutDestination(),
  );
}

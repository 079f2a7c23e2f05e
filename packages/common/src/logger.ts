import pino, { type Logger } from 'pino';

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
  'authorization',
  'x-api-key',
  'cookie',
];

export const REDACT_PATHS = [
  ...SENSITIVE_FIELDS,
  ...SENSITIVE_FIELDS.map((f) => `*.${f}`),
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.body',
];

const LONG_DIGIT_RUN = /\d(?:[ -]?\d){11,18}/g;

/** Masks anything shaped like a card number, for free text such as error messages and stacks. */
export function maskDigitRuns(text: string): string {
  return text.replace(LONG_DIGIT_RUN, '[REDACTED_NUMBER]');
}

function serializeError(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: maskDigitRuns(String(err)) };
  const out: Record<string, unknown> = {
    type: err.name,
    message: maskDigitRuns(err.message),
  };
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' || typeof code === 'number') out.code = code;
  if (err.stack) out.stack = maskDigitRuns(err.stack);
  if (err.cause !== undefined) out.cause = serializeError(err.cause);
  return out;
}

export function createLogger(service: string, level: string = 'info'): Logger {
  return pino(
    {
      name: service,
      level,
      base: { service },
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      serializers: { err: serializeError, error: serializeError },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    // Asynchronous writes: under load, lines logged while a write is in flight go out together in
    // one syscall instead of one blocking write each (see docs/PERFORMANCE.md). No minimum
    // length, so a quiet service still writes every line at once; pino flushes synchronously on
    // process exit, so nothing logged before an exit is lost.
    pino.destination({ dest: 1, sync: false }),
  );
}

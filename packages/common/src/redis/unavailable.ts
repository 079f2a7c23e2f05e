import { TesseraError } from '../errors';

/**
 * What a store throws when Redis did not answer (down, timed out, refused): service_unavailable,
 * which every transport answers with 503 (a caller may retry). A TesseraError passes unchanged.
 */
export function redisUnavailable(cause: unknown, message?: string): TesseraError {
  if (cause instanceof TesseraError) return cause;
  return new TesseraError('service_unavailable', message === undefined ? { cause } : { message, cause });
}

import * as grpc from '@grpc/grpc-js';
import { isErrorCode, TesseraError } from './errors';

/** One table from HTTP status to gRPC status, used when a service raises a TesseraError. */
const GRPC_STATUS_BY_HTTP: Record<number, grpc.status> = {
  400: grpc.status.INVALID_ARGUMENT,
  401: grpc.status.UNAUTHENTICATED,
  403: grpc.status.PERMISSION_DENIED,
  404: grpc.status.NOT_FOUND,
  413: grpc.status.INVALID_ARGUMENT,
  415: grpc.status.INVALID_ARGUMENT,
  422: grpc.status.FAILED_PRECONDITION,
  429: grpc.status.RESOURCE_EXHAUSTED,
  500: grpc.status.INTERNAL,
  502: grpc.status.ABORTED,
  503: grpc.status.UNAVAILABLE,
  504: grpc.status.DEADLINE_EXCEEDED,
};

const ERROR_METADATA_KEY = 'tessera-error-bin';

/** Turns any thrown value into a gRPC ServiceError whose metadata carries the Tessera code. */
export function toGrpcError(err: unknown): Partial<grpc.ServiceError> {
  const tesseraError = err instanceof TesseraError ? err : new TesseraError('internal_error');
  const metadata = new grpc.Metadata();
  metadata.set(ERROR_METADATA_KEY, Buffer.from(JSON.stringify(tesseraError.toJSON())));
  return {
    code: GRPC_STATUS_BY_HTTP[tesseraError.status] ?? grpc.status.INTERNAL,
    details: tesseraError.code,
    metadata,
  };
}

function isServiceError(err: unknown): err is grpc.ServiceError {
  return typeof err === 'object' && err !== null && 'code' in err && 'metadata' in err;
}

/**
 * Rebuilds the TesseraError a peer service raised; transport failures (peer down, deadline)
 * become 503/504 so a client never waits on a hanging request.
 */
export function errorFromGrpc(err: unknown): TesseraError {
  if (err instanceof TesseraError) return err;
  if (!isServiceError(err)) return new TesseraError('internal_error', { cause: err });
  const raw = err.metadata?.get(ERROR_METADATA_KEY)[0];
  if (raw !== undefined) {
    try {
      const body = JSON.parse(Buffer.isBuffer(raw) ? raw.toString('utf8') : raw) as Record<string, unknown>;
      if (isErrorCode(body.code)) {
        return new TesseraError(body.code, {
          ...(typeof body.message === 'string' ? { message: body.message } : {}),
          ...(typeof body.param === 'string' ? { param: body.param } : {}),
        });
      }
    } catch {
      // fall through to the status mapping
    }
  }
  switch (err.code) {
    case grpc.status.DEADLINE_EXCEEDED:
      return new TesseraError('upstream_timeout', { cause: err });
    case grpc.status.UNAVAILABLE:
    case grpc.status.CANCELLED:
    case grpc.status.RESOURCE_EXHAUSTED:
    case grpc.status.UNKNOWN:
      return new TesseraError('service_unavailable', { cause: err });
    default:
      return new TesseraError('internal_error', { cause: err });
  }
}

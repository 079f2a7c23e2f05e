import * as grpc from '@grpc/grpc-js';
import { isErrorCode, TesseraError } from '@tessera/common';

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

/**
 * The wire form of a refusal between services (gRPC error metadata, and the per-item errors of
 * batch RPCs): the public fields only, never a cause.
 */
export function tesseraErrorToJson(err: unknown): string {
  return JSON.stringify((err instanceof TesseraError ? err : new TesseraError('internal_error')).toJSON());
}

/** Undefined when `raw` is not an error tesseraErrorToJson wrote. */
export function tesseraErrorFromJson(raw: string): TesseraError | undefined {
  try {
    const body = JSON.parse(raw) as Record<string, unknown>;
    if (!isErrorCode(body.code)) return undefined;
    return new TesseraError(body.code, {
      ...(typeof body.message === 'string' ? { message: body.message } : {}),
      ...(typeof body.param === 'string' ? { param: body.param } : {}),
    });
  } catch {
    return undefined;
  }
}

/** The refusal of one item of a batch RPC; an answer without a readable error is an internal error. */
export function batchItemError(errorJson: string | undefined): TesseraError {
  return (errorJson === undefined ? undefined : tesseraErrorFromJson(errorJson)) ?? new TesseraError('internal_error');
}

/** Turns any thrown value into a gRPC ServiceError whose metadata carries the Tessera code. */
export function toGrpcError(err: unknown): Partial<grpc.ServiceError> {
  const tesseraError = err instanceof TesseraError ? err : new TesseraError('internal_error');
  const metadata = new grpc.Metadata();
  metadata.set(ERROR_METADATA_KEY, Buffer.from(tesseraErrorToJson(tesseraError)));
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
 * The TesseraError a peer service raised itself (its typed answer, carried in metadata); undefined
 * for a failure of the transport (peer gone, connection broken, deadline), about which the peer
 * said nothing.
 */
export function errorRaisedByPeer(err: unknown): TesseraError | undefined {
  if (!isServiceError(err)) return undefined;
  const raw = err.metadata?.get(ERROR_METADATA_KEY)[0];
  return raw === undefined ? undefined : tesseraErrorFromJson(Buffer.isBuffer(raw) ? raw.toString('utf8') : raw);
}

/**
 * Rebuilds the TesseraError a peer service raised; transport failures (peer down, deadline)
 * become 503/504 so a client never waits on a hanging request.
 */
export function errorFromGrpc(err: unknown): TesseraError {
  if (err instanceof TesseraError) return err;
  if (!isServiceError(err)) return new TesseraError('internal_error', { cause: err });
  const raised = errorRaisedByPeer(err);
  if (raised !== undefined) return raised;
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

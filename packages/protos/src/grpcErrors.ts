import * as grpc from '@grpc/grpc-js';
import { isErrorCode, TesseraError } from '@tessera/common';
import type { Refusal, Refusal__Output } from './generated/tessera/common/v1/Refusal';
import { decodeRefusal, encodeRefusal } from './protoFiles';

/** One table from HTTP status to gRPC status, used when a service raises a TesseraError. */
const GRPC_STATUS_BY_HTTP: Record<number, grpc.status> = {
  400: grpc.status.INVALID_ARGUMENT,
  401: grpc.status.UNAUTHENTICATED,
  403: grpc.status.PERMISSION_DENIED,
  404: grpc.status.NOT_FOUND,
  // Gone: a CVC session used or expired (the vault claims them). Not INTERNAL: nothing failed.
  410: grpc.status.FAILED_PRECONDITION,
  413: grpc.status.INVALID_ARGUMENT,
  415: grpc.status.INVALID_ARGUMENT,
  422: grpc.status.FAILED_PRECONDITION,
  429: grpc.status.RESOURCE_EXHAUSTED,
  500: grpc.status.INTERNAL,
  502: grpc.status.ABORTED,
  503: grpc.status.UNAVAILABLE,
  504: grpc.status.DEADLINE_EXCEEDED,
};

/**
 * A refusal crosses the wire as a typed `tessera.common.v1.Refusal`: in a unary call's trailers
 * (REFUSAL_METADATA_KEY, the serialized message) and in a batch item's `outcome` oneof. Trailers
 * rather than a oneof in every response: unary responses stay the plain messages they are (a
 * TokenRecord, a ForwardResponse) and the gRPC status code still says what kind of failure it
 * was to any tool that reads only the status; the batch results already had an outcome oneof, so
 * each item's refusal is typed there, the same message, read by the same errorFromRefusal.
 */
const REFUSAL_METADATA_KEY = 'tessera-refusal-bin';
/**
 * The previous release's form ({"code", "message", "param"} JSON in this trailer, and in the
 * batch results' error_json). Still written for one release, so peers not yet upgraded read
 * refusals, and still read, for answers from peers not yet upgraded (docs/operations.md).
 */
const LEGACY_ERROR_METADATA_KEY = 'tessera-error-bin';

/** The wire form of a refusal between services: the public fields only, never a cause. */
export function refusalOf(err: unknown): Refusal__Output {
  const error = err instanceof TesseraError ? err : new TesseraError('internal_error');
  return { code: error.code, message: error.message, ...(error.param !== undefined ? { param: error.param } : {}) };
}

/** The TesseraError a Refusal stands for; undefined for none, or a code the error catalogue does not know. */
export function errorFromRefusal(refusal: Refusal | null | undefined): TesseraError | undefined {
  if (!refusal || !isErrorCode(refusal.code)) return undefined;
  return new TesseraError(refusal.code, {
    ...(refusal.message ? { message: refusal.message } : {}),
    ...(refusal.param !== undefined ? { param: refusal.param } : {}),
  });
}

/** The previous release's JSON form of a refusal (see LEGACY_ERROR_METADATA_KEY). */
function legacyErrorJson(err: unknown): string {
  return JSON.stringify((err instanceof TesseraError ? err : new TesseraError('internal_error')).toJSON());
}

/** Undefined when `raw` is not an error legacyErrorJson wrote. */
function errorFromLegacyJson(raw: string): TesseraError | undefined {
  try {
    const body = JSON.parse(raw) as Record<string, unknown>;
    return errorFromRefusal({
      code: typeof body.code === 'string' ? body.code : '',
      ...(typeof body.message === 'string' ? { message: body.message } : {}),
      ...(typeof body.param === 'string' ? { param: body.param } : {}),
    });
  } catch {
    return undefined;
  }
}

/** A batch item's refusal, in the typed field and (for one release) in the previous release's error_json. */
export function refusedItem(err: unknown): { refusal: Refusal__Output; errorJson: string } {
  return { refusal: refusalOf(err), errorJson: legacyErrorJson(err) };
}

/**
 * The refusal of one item of a batch RPC: its typed `refusal`, else the error_json of a peer not
 * yet upgraded; an answer without a readable refusal is an internal error.
 */
export function batchItemError(result: { refusal?: Refusal | null; errorJson?: string }): TesseraError {
  return (
    errorFromRefusal(result.refusal) ??
    (result.errorJson ? errorFromLegacyJson(result.errorJson) : undefined) ??
    new TesseraError('internal_error')
  );
}

/**
 * A call refused for who made it (the caller's verified mTLS identity), not for what its user sent:
 * PERMISSION_DENIED without a Refusal, as restrictCallers answers an RPC the caller may not make at
 * all. A well-behaved service never sees it, so there is nothing typed to tell its users; the details
 * (never card data) are for the operators of both ends.
 */
export class CallerNotAllowedError extends Error {
  override readonly name = 'CallerNotAllowedError';
}

/** Turns any thrown value into a gRPC ServiceError whose trailers carry the Refusal (none for CallerNotAllowedError). */
export function toGrpcError(err: unknown): Partial<grpc.ServiceError> {
  if (err instanceof CallerNotAllowedError) return { code: grpc.status.PERMISSION_DENIED, details: err.message };
  const tesseraError = err instanceof TesseraError ? err : new TesseraError('internal_error');
  const metadata = new grpc.Metadata();
  metadata.set(REFUSAL_METADATA_KEY, encodeRefusal(refusalOf(tesseraError)));
  metadata.set(LEGACY_ERROR_METADATA_KEY, Buffer.from(legacyErrorJson(tesseraError)));
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
  const refusal = err.metadata?.get(REFUSAL_METADATA_KEY)[0];
  if (Buffer.isBuffer(refusal)) return errorFromRefusal(decodeRefusal(refusal));
  const legacy = err.metadata?.get(LEGACY_ERROR_METADATA_KEY)[0];
  return legacy === undefined ? undefined : errorFromLegacyJson(Buffer.isBuffer(legacy) ? legacy.toString('utf8') : legacy);
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

import * as grpc from '@grpc/grpc-js';
import { TesseraError } from '@tessera/common';
import { errorFromGrpc, toGrpcError } from './grpcErrors';

const asServiceError = (partial: Partial<grpc.ServiceError>): grpc.ServiceError =>
  Object.assign(new Error(partial.details ?? 'x'), { code: grpc.status.UNKNOWN, details: '', metadata: new grpc.Metadata(), ...partial });

describe('gRPC error mapping', () => {
  it('carries a TesseraError across gRPC with its code, message and param', () => {
    const sent = toGrpcError(new TesseraError('cvv_unavailable', { param: 'pspBody' }));
    expect(sent.code).toBe(grpc.status.FAILED_PRECONDITION);
    const received = errorFromGrpc(asServiceError(sent));
    expect(received).toMatchObject({ code: 'cvv_unavailable', status: 422, param: 'pspBody' });
  });

  it('hides unexpected exceptions behind internal_error', () => {
    const sent = toGrpcError(new Error('secret detail'));
    const received = errorFromGrpc(asServiceError(sent));
    expect(received.code).toBe('internal_error');
    expect(received.message).not.toContain('secret detail');
  });

  it('maps a peer that is down to 503 and a missed deadline to 504', () => {
    expect(errorFromGrpc(asServiceError({ code: grpc.status.UNAVAILABLE })).status).toBe(503);
    expect(errorFromGrpc(asServiceError({ code: grpc.status.DEADLINE_EXCEEDED })).status).toBe(504);
  });
});

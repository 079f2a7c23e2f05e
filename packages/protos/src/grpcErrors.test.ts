import * as grpc from '@grpc/grpc-js';
import { TesseraError } from '@tessera/common';
import { batchItemError, CallerNotAllowedError, errorFromGrpc, errorRaisedByPeer, refusedItem, toGrpcError } from './grpcErrors';
import { decodeRefusal } from './protoFiles';

const asServiceError = (partial: Partial<grpc.ServiceError>): grpc.ServiceError =>
  Object.assign(new Error(partial.details ?? 'x'), { code: grpc.status.UNKNOWN, details: '', metadata: new grpc.Metadata(), ...partial });

describe('gRPC error mapping', () => {
  it('carries a TesseraError across gRPC with its code, message and param', () => {
    const sent = toGrpcError(new TesseraError('cvv_unavailable', { param: 'pspBody' }));
    expect(sent.code).toBe(grpc.status.FAILED_PRECONDITION);
    const received = errorFromGrpc(asServiceError(sent));
    expect(received).toMatchObject({ code: 'cvv_unavailable', status: 422, param: 'pspBody' });
  });

  it('sends the refusal as a typed tessera.common.v1.Refusal in the tessera-refusal-bin trailer', () => {
    const sent = toGrpcError(new TesseraError('cvv_unavailable', { param: 'pspBody' }));
    const trailer = sent.metadata?.get('tessera-refusal-bin')[0];
    expect(Buffer.isBuffer(trailer) && decodeRefusal(trailer)).toMatchObject({
      code: 'cvv_unavailable',
      message: new TesseraError('cvv_unavailable').message,
      param: 'pspBody',
    });
  });

  it('reads the refusals of a peer of the previous release (JSON), and a code it does not know as internal_error', () => {
    const legacy = new grpc.Metadata();
    legacy.set('tessera-error-bin', Buffer.from(JSON.stringify({ code: 'token_not_found', message: 'gone', param: 'token' })));
    expect(errorFromGrpc(asServiceError({ code: grpc.status.NOT_FOUND, metadata: legacy }))).toMatchObject({
      code: 'token_not_found',
      status: 404,
      message: 'gone',
      param: 'token',
    });
    expect(batchItemError({ errorJson: JSON.stringify({ code: 'card_number_invalid' }) })).toMatchObject({ code: 'card_number_invalid' });
    expect(batchItemError(refusedItem(new TesseraError('cvv_unavailable')))).toMatchObject({ code: 'cvv_unavailable', status: 422 });
    expect(batchItemError({ refusal: { code: 'a_code_from_the_future', message: 'x' } })).toMatchObject({ code: 'internal_error' });
    expect(batchItemError({})).toMatchObject({ code: 'internal_error' });
  });

  it('hides unexpected exceptions behind internal_error', () => {
    const sent = toGrpcError(new Error('secret detail'));
    const received = errorFromGrpc(asServiceError(sent));
    expect(received.code).toBe('internal_error');
    expect(received.message).not.toContain('secret detail');
  });

  it('sends a refusal of something gone (410) as FAILED_PRECONDITION, not as an internal failure', () => {
    const sent = toGrpcError(new TesseraError('cvc_session_used'));
    expect(sent.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(errorFromGrpc(asServiceError(sent))).toMatchObject({ code: 'cvc_session_used', status: 410 });
  });

  it('refuses a caller beyond its rights as PERMISSION_DENIED without a typed refusal, as the caller policy does', () => {
    const sent = toGrpcError(new CallerNotAllowedError('the fields identity may create provisional tokens only'));
    expect(sent).toEqual({ code: grpc.status.PERMISSION_DENIED, details: 'the fields identity may create provisional tokens only' });
    expect(errorRaisedByPeer(asServiceError(sent))).toBeUndefined();
  });

  it('maps a peer that is down to 503 and a missed deadline to 504', () => {
    expect(errorFromGrpc(asServiceError({ code: grpc.status.UNAVAILABLE })).status).toBe(503);
    expect(errorFromGrpc(asServiceError({ code: grpc.status.DEADLINE_EXCEEDED })).status).toBe(504);
  });
});

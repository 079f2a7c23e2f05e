import * as grpc from '@grpc/grpc-js';

/** Per call (keyed by its request metadata): settles true when the reply went out with status OK, else false. */
const deliveries = new WeakMap<grpc.Metadata, Promise<boolean>>();

/**
 * Follows each call to its end, so a handler can tell an answered call from one whose answer never
 * left: the caller cancelled or its deadline passed first, or grpc-js refused to write the reply
 * (serialization, message size) and sent its own error status instead. grpc-js reports every
 * call as cancelled when its stream ends, also after a successful answer; only a status OK sent
 * before that end means the reply was written.
 */
export const deliveryInterceptor: grpc.ServerInterceptor = (_method, call) => {
  let settle: (delivered: boolean) => void = () => undefined;
  const delivered = new Promise<boolean>((resolve) => {
    settle = resolve;
  });
  let okSent = false;
  return new grpc.ServerInterceptingCall(call, {
    start(next) {
      next({
        onReceiveMetadata(metadata, nextMetadata) {
          deliveries.set(metadata, delivered);
          nextMetadata(metadata);
        },
        onCancel() {
          settle(okSent);
        },
      });
    },
    sendStatus(status, next) {
      // Only the handler's OK passes here after the reply was written; grpc-js's own
      // write-failure statuses are sent below this interceptor and never set it.
      okSent = status.code === grpc.status.OK;
      next(status);
    },
  });
};

/** The delivery outcome of the call with this request metadata; undefined without the interceptor. */
export function deliveryOf(metadata: grpc.Metadata): Promise<boolean> | undefined {
  return deliveries.get(metadata);
}

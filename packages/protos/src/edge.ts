import * as grpc from '@grpc/grpc-js';
import { TesseraError } from '@tessera/common';
import { errorFromGrpc, errorRaisedByPeer } from './grpcErrors';

export const REQUEST_ID_METADATA_KEY = 'x-request-id';

export type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: grpc.requestCallback<Res>,
) => grpc.ClientUnaryCall;

export interface CallOptions {
  timeoutMs: number;
  requestId?: string;
}

/**
 * Calls a unary method with a deadline (every network edge has one) and the request id in
 * metadata. Rejects with the raw grpc ServiceError: for tests that look at the wire. Services
 * call through `call`, which rejects with a TesseraError.
 *
 * The answer is used as soon as its message has arrived, not when the status trailers follow.
 * A grpc-js server writes the trailers only after the message's write has completed, one turn of
 * its event loop later and in a socket write of their own, so waiting for them costs each hop that
 * turn plus a second wake-up of the caller (0.2-0.9 ms per hop measured on the bench machine; see
 * docs/PERFORMANCE.md). A server sends a unary message only when its handler answered with
 * success; every refusal (a typed error, a deadline, a cancel, a broken connection before the
 * message) is a status without a message and still rejects. A status that fails after the message
 * (the deadline passing meanwhile) does not take back an answer that has already arrived.
 */
export function callUnary<Req, Res>(client: grpc.Client, method: UnaryMethod<Req, Res>, request: Req, opts: CallOptions): Promise<Res> {
  const metadata = new grpc.Metadata();
  if (opts.requestId) metadata.set(REQUEST_ID_METADATA_KEY, opts.requestId);
  const deadline = new Date(Date.now() + opts.timeoutMs);
  return new Promise<Res>((resolve, reject) => {
    let answered = false;
    const onMessage: grpc.Interceptor = (options, nextCall) =>
      new grpc.InterceptingCall(nextCall(options), {
        start(md, listener, next) {
          next(md, {
            onReceiveMessage(message: Res | null, nextMessage: (message: Res | null) => void) {
              // grpc-js reports a status that came without a message as a null message first.
              if (message !== null && !answered) {
                answered = true;
                resolve(message);
              }
              nextMessage(message);
            },
          });
        },
      });
    method.call(client, request, metadata, { deadline, interceptors: [onMessage] }, (err, res) => {
      if (answered) return;
      answered = true;
      if (err) reject(err);
      else if (res === undefined) reject(new Error('empty gRPC response'));
      else resolve(res);
    });
  });
}

/**
 * The TesseraError a failed call means to the caller: the peer's own typed error, or 503 for the
 * transport, a deadline included. No call made through `call` can reach a PSP (Forward goes
 * through callOnceConnected), and the vault answers every call itself before its caller's
 * deadline, so a deadline means the peer did not answer at all: down, hung (SIGSTOP, a stalled
 * node) or partitioned. That is 503, which an Idempotency-Key does not keep: the retry runs again,
 * as after a gateway crash (docs/failure-modes.md says what a call the peer ran late may leave behind).
 */
export function callError(err: unknown): TesseraError {
  const error = errorFromGrpc(err);
  return error.code === 'upstream_timeout' ? new TesseraError('service_unavailable', { cause: err }) : error;
}

/** callUnary whose failures are already TesseraErrors (see callError); `cause` keeps the gRPC error. */
export function call<Req, Res>(client: grpc.Client, method: UnaryMethod<Req, Res>, request: Req, opts: CallOptions): Promise<Res> {
  return callUnary(client, method, request, opts).catch((err: unknown) => {
    throw callError(err);
  });
}

/**
 * For calls that may have an effect nobody can undo (Forward reaches a PSP), failures are sorted
 * by what the caller can prove. Nothing happened when the peer answered with its own typed error,
 * or when the call was never started because no connection was ready (see whenConnected). Once a
 * call has started and no typed answer came back (the peer died, the connection broke, the
 * deadline passed), the effect may have happened: 502 psp_outcome_unknown.
 */
export function startedCallError(err: unknown): TesseraError {
  if (err instanceof TesseraError) return err;
  return errorRaisedByPeer(err) ?? new TesseraError('psp_outcome_unknown', { cause: err });
}

const UNAVAILABLE_STATES = new Set<number>([grpc.connectivityState.TRANSIENT_FAILURE, grpc.connectivityState.SHUTDOWN]);

/**
 * Resolves once the channel has a ready connection, so a call is only started when it can be
 * written. A channel that is failing, or does not connect before the deadline, means nothing was
 * started: 503, safe to retry (grpc-js cannot say whether a call it had started was ever written,
 * so that question is settled before starting it). `peer` names the service in the message.
 */
export function whenConnected(client: grpc.Client, deadline: number, peer: string): Promise<void> | undefined {
  const channel = client.getChannel();
  const unavailable = (cause?: unknown) =>
    new TesseraError('service_unavailable', { message: `The ${peer} is not reachable; nothing was sent.`, cause });
  const first = channel.getConnectivityState(true);
  if (first === grpc.connectivityState.READY) return undefined;
  return new Promise<void>((resolve, reject) => {
    const check = (state: number): void => {
      if (state === grpc.connectivityState.READY) return resolve();
      if (UNAVAILABLE_STATES.has(state)) return reject(unavailable());
      channel.watchConnectivityState(state, deadline, (err) => {
        if (err) reject(unavailable(err));
        else check(channel.getConnectivityState(true));
      });
    };
    check(first);
  });
}

/**
 * A call that must not run twice by accident: started only once connected (else 503), and its
 * failures after starting sorted by startedCallError.
 */
export async function callOnceConnected<Req, Res>(
  client: grpc.Client,
  method: UnaryMethod<Req, Res>,
  request: Req,
  opts: CallOptions & { peer: string },
): Promise<Res> {
  const deadline = Date.now() + opts.timeoutMs;
  await whenConnected(client, deadline, opts.peer);
  try {
    return await callUnary(client, method, request, {
      timeoutMs: Math.max(1, deadline - Date.now()),
      ...(opts.requestId !== undefined ? { requestId: opts.requestId } : {}),
    });
  } catch (err) {
    throw startedCallError(err);
  }
}

import * as grpc from '@grpc/grpc-js';
import { TesseraError } from '@tessera/common';
import type { ProxyClient } from './generated/tessera/proxy/v1/Proxy';
import type { ForwardUpstreamResponse__Output } from './generated/tessera/proxy/v1/ForwardUpstreamResponse';
import { upstreamCallToWire, type UpstreamCall } from './contract';
import { REQUEST_ID_METADATA_KEY, startedCallError, whenConnected } from './edge';
import { errorFromGrpc } from './grpcErrors';

/** The upstream's answer to a ForwardUpstream call, as soon as its head has arrived. */
export interface UpstreamAnswer {
  status: number;
  /** In the upstream's order, hop-by-hop headers and content-length removed. */
  headers: { name: string; value: string }[];
  /**
   * The body in the order received, read from the proxy only as fast as it is iterated. Iterate it
   * to its end, or stop early (break, return): that cancels the call and the upstream exchange. A
   * failure part way (the upstream silent for timeoutMs, its connection broken) throws the
   * proxy's TesseraError (psp_timeout, psp_unreachable); a broken call, psp_outcome_unknown.
   */
  body: AsyncIterable<Buffer>;
}

export interface UpstreamCallOptions {
  /** Sent as x-request-id, for the proxy's logs. */
  requestId?: string;
  /** Aborting cancels the call and the proxy's exchange with the upstream, before or after the head; the promise (or the body) then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** How much longer than the proxy's own wait for the head (request.timeoutMs) the caller waits for it: the proxy's timeout, not ours, normally ends a slow upstream. */
  marginMs?: number;
}

/** Statuses a call is refused with at the door (a caller policy, a proxy without the RPC): nothing was sent. */
const REFUSED_BEFORE_SENDING = new Set<number>([grpc.status.PERMISSION_DENIED, grpc.status.UNAUTHENTICATED, grpc.status.UNIMPLEMENTED]);

/** The proxy's PSP_TIMEOUT_MS default: what it waits for a head when request.timeoutMs is 0. */
const PROXY_DEFAULT_TIMEOUT_MS = 30_000;

type Part = ForwardUpstreamResponse__Output;

/**
 * The proxy's ForwardUpstream as the inbound service uses it (ADR 0013): an inbound route's
 * rewritten request to the merchant's upstream, through the proxy's egress and destination policy,
 * the answer streamed back. Resolves with the head once it has arrived; rejects with a TesseraError:
 * the proxy's own refusal (card_data_unmatched, psp_destination_forbidden, psp_timeout,
 * psp_unreachable, parameter_invalid), 503 service_unavailable when no connection to the proxy was
 * ready (nothing was sent), 500 internal_error when the proxy refused the caller's identity, else
 * 502 psp_outcome_unknown (the call started and broke, or no head
 * came within timeoutMs + marginMs: the upstream may have acted on the request).
 *
 * The call itself has no gRPC deadline, so a long download is not cut: the proxy bounds the wait
 * for the head and every silence within the body; the caller bounds the rest with `signal`.
 */
export async function forwardUpstream(client: ProxyClient, request: UpstreamCall, opts: UpstreamCallOptions = {}): Promise<UpstreamAnswer> {
  const { signal } = opts;
  signal?.throwIfAborted();
  const headWaitMs = (request.timeoutMs > 0 ? request.timeoutMs : PROXY_DEFAULT_TIMEOUT_MS) + (opts.marginMs ?? 1000);
  await whenConnected(client, Date.now() + headWaitMs, 'proxy');
  signal?.throwIfAborted();

  const metadata = new grpc.Metadata();
  if (opts.requestId) metadata.set(REQUEST_ID_METADATA_KEY, opts.requestId);
  const stream = client.ForwardUpstream(upstreamCallToWire(request), metadata);
  const cancel = (): void => stream.cancel();
  signal?.addEventListener('abort', cancel, { once: true });
  const messages: AsyncIterator<Part> = stream[Symbol.asyncIterator]();
  const failure = (err: unknown): unknown => {
    if (signal?.aborted) return signal.reason;
    const code = (err as { code?: unknown } | null)?.code;
    return typeof code === 'number' && REFUSED_BEFORE_SENDING.has(code) ? errorFromGrpc(err) : startedCallError(err);
  };
  const release = (): void => {
    signal?.removeEventListener('abort', cancel);
    stream.cancel();
  };

  let first: IteratorResult<Part>;
  const headTimer = setTimeout(cancel, headWaitMs);
  try {
    first = await messages.next();
  } catch (err) {
    release();
    throw failure(err);
  } finally {
    clearTimeout(headTimer);
  }
  const head = first.done || first.value.part !== 'head' ? undefined : first.value.head;
  if (head === undefined || head === null) {
    release();
    throw new TesseraError('internal_error', { message: 'The proxy answered ForwardUpstream without a head.' });
  }

  async function* body(): AsyncGenerator<Buffer> {
    try {
      for (;;) {
        let next: IteratorResult<Part>;
        try {
          next = await messages.next();
        } catch (err) {
          throw failure(err);
        }
        if (next.done) return;
        if (next.value.part !== 'chunk' || next.value.chunk === undefined)
          throw new TesseraError('internal_error', { message: 'The proxy sent a second head.' });
        yield next.value.chunk;
      }
    } finally {
      // Also when the reader stopped early: nobody wants the rest (a no-op once the call has ended).
      release();
    }
  }
  return { status: head.status, headers: head.headers, body: body() };
}

import type { PspCancellation } from '../egress/pspEgress';

/** An answer whose body follows its head (ForwardUpstream's). */
export interface StreamedAnswer {
  status: number;
  headers: { name: string; value: string }[];
  body: AsyncIterable<Buffer>;
}

/** What the relay needs of a grpc-js server stream: an object-mode Writable that also says when its caller has gone. */
export interface AnswerStream {
  write(message: { head: { status: number; headers: StreamedAnswer['headers'] } } | { chunk: Buffer }): boolean;
  on(event: 'drain' | 'cancelled', listener: () => void): unknown;
  off(event: 'drain' | 'cancelled', listener: () => void): unknown;
}

/** Resolves when the caller's stream has room for more again, or the caller has gone. */
function roomOrCancel(call: AnswerStream, cancellation: PspCancellation): Promise<void> {
  if (cancellation.cancelled) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      call.off('drain', done);
      call.off('cancelled', done);
      resolve();
    };
    call.on('drain', done);
    call.on('cancelled', done);
  });
}

/**
 * Writes the head, then each chunk of the body as it comes, and asks the body for the next one
 * only once the caller's stream has room (grpc-js's write returns false past its buffer, which
 * HTTP/2 flow control keeps from draining while the caller does not read): a slow reader slows the
 * upstream down, and nothing piles up here. Stops, leaving the body (which aborts the exchange), as
 * soon as the caller has gone. The caller of this ends the stream.
 */
export async function relayStreamedAnswer(call: AnswerStream, answer: StreamedAnswer, cancellation: PspCancellation): Promise<void> {
  if (cancellation.cancelled) return;
  call.write({ head: { status: answer.status, headers: answer.headers } });
  for await (const chunk of answer.body) {
    if (cancellation.cancelled) return;
    if (!call.write({ chunk })) await roomOrCancel(call, cancellation);
    if (cancellation.cancelled) return;
  }
}

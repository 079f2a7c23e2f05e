import * as grpc from '@grpc/grpc-js';
import { restrictCallers } from './tls';

/** Just enough of a grpc-js server call for the guard: the peer's certificate names, and emit. */
function callFrom(sanNames: string[]) {
  const emitted: unknown[][] = [];
  return {
    emitted,
    call: {
      getAuthContext: () => ({ sslPeerCertificate: { subjectaltname: sanNames.map((name) => `DNS:${name}`).join(', ') } }),
      emit: (...args: unknown[]) => emitted.push(args),
    },
  };
}

describe('restrictCallers', () => {
  const policy = { Unary: ['gateway'], Streaming: ['gateway'] };

  it('runs unary and server-streaming handlers for an allowed caller', () => {
    const ran: string[] = [];
    const guarded = restrictCallers({ Unary: () => ran.push('unary'), Streaming: () => ran.push('streaming') }, policy, true) as Record<
      string,
      (call: unknown, callback?: unknown) => void
    >;
    guarded.Unary!(callFrom(['gateway']).call, () => undefined);
    guarded.Streaming!(callFrom(['gateway']).call);
    expect(ran).toEqual(['unary', 'streaming']);
  });

  it('refuses any other caller with PERMISSION_DENIED: through the callback, or by ending the stream', () => {
    const ran: string[] = [];
    const guarded = restrictCallers({ Unary: () => ran.push('unary'), Streaming: () => ran.push('streaming') }, policy, true) as Record<
      string,
      (call: unknown, callback?: (err: unknown) => void) => void
    >;
    const unaryAnswers: unknown[] = [];
    guarded.Unary!(callFrom(['proxy']).call, (err) => unaryAnswers.push(err));
    const streaming = callFrom(['proxy']);
    guarded.Streaming!(streaming.call);
    expect(ran).toEqual([]);
    expect(unaryAnswers).toEqual([expect.objectContaining({ code: grpc.status.PERMISSION_DENIED })]);
    expect(streaming.emitted).toEqual([['error', expect.objectContaining({ code: grpc.status.PERMISSION_DENIED })]]);
  });
});

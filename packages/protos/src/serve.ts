import type * as grpc from '@grpc/grpc-js';
import { toGrpcError } from './grpcErrors';
import type { Listener } from '@tessera/common';

export interface Answering<Res> {
  /** Refuse with `error()` after `ms` unless answered by then; what still runs is abandoned, its answer dropped. */
  budget?: { ms: number; error: () => unknown } | undefined;
  /** Just before the reply is sent (count it, log it). */
  ok?(reply: Res): void;
  /** Just before the refusal is sent. */
  failed?(err: unknown): void;
}

/**
 * The one way a server answers a unary call: once, with the reply or with the refusal as a gRPC
 * status whose metadata carries the TesseraError (toGrpcError: public fields only, anything else
 * is internal_error), so every client maps it back the same way.
 */
export function answerUnary<Res>(callback: grpc.sendUnaryData<Res>, work: Promise<Res>, hooks: Answering<Res> = {}): void {
  let answered = false;
  const fail = (err: unknown): void => {
    if (answered) return;
    answered = true;
    clearTimeout(timer);
    hooks.failed?.(err);
    callback(toGrpcError(err));
  };
  const budget = hooks.budget;
  const timer = budget === undefined ? undefined : setTimeout(() => fail(budget.error()), budget.ms);
  work.then((reply) => {
    if (answered) return;
    answered = true;
    clearTimeout(timer);
    hooks.ok?.(reply);
    callback(null, reply);
  }, fail);
}

/** Lets in-flight calls finish, but not forever: after `graceMs` the rest are cancelled. Resolves either way. */
export function shutdownServer(server: grpc.Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    timer.unref();
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * A gRPC server as runService drains it: its health service (if any) says NOT_SERVING first, so
 * watching clients send new calls to the other replicas while the calls in flight finish.
 */
export function grpcListener(server: grpc.Server, health?: { shutdown(): void }): Listener {
  return {
    drain: () => {
      health?.shutdown();
      return new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    },
    cut: () => server.forceShutdown(),
  };
}

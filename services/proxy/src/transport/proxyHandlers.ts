import { outcomeLabel, TesseraError, type Logger, type RpcObserver } from '@tessera/common';
import {
  answerUnary,
  completionCallFromWire,
  webhookDeliveryFromWire,
  dryRunResponseToWire,
  forwardRequestFromWire,
  forwardRouteAnswerToWire,
  forwardRouteFromWire,
  refusedItem,
  requestIdFromMetadata,
  toGrpcError,
  upstreamCallFromWire,
  wellFormedRequestId,
  type ForwardBatchResponse,
  type ProxyHandlers,
} from '@tessera/protos';
import { dryRunForward } from '../app/dryRun';
import { forwardToPsp, type ForwardDeps } from '../app/forward';
import { forwardRoute } from '../app/forwardRoute';
import { callCompletion } from '../app/callCompletion';
import { deliverWebhook } from '../app/deliverWebhook';
import { forwardUpstream } from '../app/forwardUpstream';
import { cancelPspExchange, type PspCancellation } from '../egress/pspEgress';
import { relayStreamedAnswer, type StreamedAnswer } from './relayStreamedAnswer';
import type { VaultPort } from '../app/vaultPort';

export interface HandlerDeps extends ForwardDeps {
  vault: Pick<VaultPort, 'render' | 'preview' | 'renderRoute'>;
  logger: Logger;
  /** Counts RPCs by outcome; Forward's outcome is the PSP's status class (2xx…5xx) or the error code. */
  observe?: RpcObserver;
  /** Looks at the deadline each Forward arrives with (see callerDeadline.ts). */
  checkCallerDeadline?: (deadline: Date | number) => void;
  /** MERCHANT_CALL_MAX_RESPONSE_BYTES: the most a completion endpoint may answer. */
  maxCompletionResponseBytes: number;
}

const seconds = (started: bigint): number => Number(process.hrtime.bigint() - started) / 1e9;

type UpstreamStream = Parameters<ProxyHandlers['ForwardUpstream']>[0];

export function createProxyHandlers(deps: HandlerDeps): ProxyHandlers {
  /**
   * One unary exchange with a server outside (a PSP, a merchant's endpoint): when the caller gives
   * up (deadline, client gone), the exchange stops too (grpc-js also emits 'cancelled' when the
   * stream closes after the answer; by then nothing is in flight), and the RPC is counted by the
   * answer's status class (`<prefix>_2xx`) or the error's code.
   */
  function answerExchange<Res extends { status?: number | null }>(
    call: { metadata: Parameters<typeof requestIdFromMetadata>[0]; once(event: 'cancelled', listener: () => void): unknown },
    callback: Parameters<typeof answerUnary<Res>>[0],
    rpc: string,
    statusPrefix: string,
    exchange: (ctx: { requestId?: string; cancellation: PspCancellation }) => Promise<Res>,
  ): void {
    const requestId = requestIdFromMetadata(call.metadata);
    const cancellation: PspCancellation = { cancelled: false };
    call.once('cancelled', () => cancelPspExchange(cancellation));
    const started = process.hrtime.bigint();
    answerUnary(callback, exchange({ ...(requestId ? { requestId } : {}), cancellation }), {
      ok: (res) => deps.observe?.(rpc, `${statusPrefix}_${Math.floor((res.status ?? 0) / 100)}xx`, seconds(started)),
      failed: (err) => deps.observe?.(rpc, outcomeLabel(err), seconds(started)),
    });
  }

  /**
   * answerExchange's sibling for an answer streamed back (relayStreamedAnswer.ts: head first, then
   * the body's chunks with backpressure). A refusal before the head is the call's status with the
   * Refusal trailer, as for a unary call; a failure within the body ends the stream with that status
   * after the chunks already sent. The caller's cancel stops the exchange, before or after the head.
   * The RPC is counted once the stream has ended, by the head's status class or the error's code.
   */
  function streamExchange(
    call: UpstreamStream,
    rpc: string,
    statusPrefix: string,
    exchange: (ctx: { requestId?: string; cancellation: PspCancellation }) => Promise<StreamedAnswer>,
  ): void {
    const requestId = requestIdFromMetadata(call.metadata);
    const cancellation: PspCancellation = { cancelled: false };
    call.once('cancelled', () => cancelPspExchange(cancellation));
    const started = process.hrtime.bigint();
    const relay = async (): Promise<number> => {
      const answer = await exchange({ ...(requestId ? { requestId } : {}), cancellation });
      await relayStreamedAnswer(call, answer, cancellation);
      return answer.status;
    };
    relay().then(
      (status) => {
        deps.observe?.(rpc, `${statusPrefix}_${Math.floor(status / 100)}xx`, seconds(started));
        if (!cancellation.cancelled) call.end();
      },
      (err: unknown) => {
        deps.observe?.(rpc, outcomeLabel(err), seconds(started));
        if (!cancellation.cancelled) call.emit('error', toGrpcError(err));
      },
    );
  }

  return {
    Forward(call, callback) {
      deps.checkCallerDeadline?.(call.getDeadline());
      answerExchange(call, callback, 'Forward', 'psp', (ctx) => forwardToPsp(deps, forwardRequestFromWire(call.request), ctx));
    },
    // Each item as if it had come in its own Forward call (same logs and metrics); its answer is
    // written as soon as its PSP has answered, and the call ends with the last one.
    ForwardBatch(call) {
      deps.checkCallerDeadline?.(call.getDeadline());
      const cancellations = call.request.items.map((): PspCancellation => ({ cancelled: false }));
      let callCancelled = false;
      call.once('cancelled', () => {
        callCancelled = true;
        cancellations.forEach(cancelPspExchange);
      });
      const started = process.hrtime.bigint();
      let open = call.request.items.length;
      const answer = (result: ForwardBatchResponse): void => {
        if (!callCancelled) call.write(result);
        open -= 1;
        if (open === 0) call.end();
      };
      if (open === 0) call.end();
      call.request.items.forEach((item, index) => {
        if (item.request === null) {
          answer({ index, ...refusedItem(new TesseraError('invalid_request')) });
          return;
        }
        const requestId = wellFormedRequestId(item.requestId);
        const cancellation = cancellations[index];
        forwardToPsp(deps, forwardRequestFromWire(item.request), {
          ...(requestId ? { requestId } : {}),
          ...(cancellation ? { cancellation } : {}),
        }).then(
          (response) => {
            deps.observe?.('Forward', `psp_${Math.floor((response.status ?? 0) / 100)}xx`, seconds(started));
            answer({ index, response });
          },
          (err: unknown) => {
            deps.observe?.('Forward', outcomeLabel(err), seconds(started));
            answer({ index, ...refusedItem(err) });
          },
        );
      });
    },
    CallCompletion(call, callback) {
      answerExchange(call, callback, 'CallCompletion', 'merchant', (ctx) =>
        callCompletion({ ...deps, maxResponseBytes: deps.maxCompletionResponseBytes }, completionCallFromWire(call.request), ctx),
      );
    },
    ForwardRoute(call, callback) {
      deps.checkCallerDeadline?.(call.getDeadline());
      answerExchange(call, callback, 'ForwardRoute', 'psp', (ctx) =>
        forwardRoute(deps, forwardRouteFromWire(call.request), ctx).then(forwardRouteAnswerToWire),
      );
    },
    // Issue 28 (ADR 0013): contract defined, the implementation lands with the inbound routes.
    ForwardUpstream(call) {
      streamExchange(call, 'ForwardUpstream', 'upstream', (ctx) => forwardUpstream(deps, upstreamCallFromWire(call.request), ctx));
    },
    DeliverWebhook(call, callback) {
      answerExchange(call, callback, 'DeliverWebhook', 'receiver', (ctx) =>
        deliverWebhook(deps, webhookDeliveryFromWire(call.request), ctx),
      );
    },
    DryRun(call, callback) {
      const requestId = requestIdFromMetadata(call.metadata);
      const started = process.hrtime.bigint();
      answerUnary(
        callback,
        dryRunForward(deps, forwardRequestFromWire(call.request), requestId ? { requestId } : {}).then(dryRunResponseToWire),
        {
          ok: () => deps.observe?.('DryRun', 'ok', seconds(started)),
          failed: (err) => deps.observe?.('DryRun', outcomeLabel(err), seconds(started)),
        },
      );
    },
  };
}

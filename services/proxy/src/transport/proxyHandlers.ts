import { outcomeLabel, TesseraError, tesseraErrorToJson, toGrpcError, type Logger, type RpcObserver } from '@tessera/common';
import { requestIdFromMetadata, wellFormedRequestId, type ProxyHandlers } from '@tessera/protos';
import { dryRunForward } from '../app/dryRun';
import { forwardToPsp, type ForwardDeps } from '../app/forward';
import { cancelPspExchange, type PspCancellation } from '../egress/pspEgress';
import type { VaultPort } from './vaultClient';

export interface HandlerDeps extends ForwardDeps {
  vault: Pick<VaultPort, 'render' | 'preview' | 'ready'>;
  logger: Logger;
  /** Counts RPCs by outcome; Forward's outcome is the PSP's status class (2xx…5xx) or the error code. */
  observe?: RpcObserver;
}

const seconds = (started: bigint): number => Number(process.hrtime.bigint() - started) / 1e9;

export function createProxyHandlers(deps: HandlerDeps): ProxyHandlers {
  return {
    Forward(call, callback) {
      const requestId = requestIdFromMetadata(call.metadata);
      // When the gateway gives up (deadline, client gone), stop talking to the PSP too. grpc-js
      // also emits 'cancelled' when the stream closes after the answer; by then nothing is in flight.
      const cancellation: PspCancellation = { cancelled: false };
      call.once('cancelled', () => cancelPspExchange(cancellation));
      const started = process.hrtime.bigint();
      forwardToPsp(deps, call.request, { ...(requestId ? { requestId } : {}), cancellation }).then(
        (res) => {
          deps.observe?.('Forward', `psp_${Math.floor((res.status ?? 0) / 100)}xx`, seconds(started));
          callback(null, res);
        },
        (err: unknown) => {
          deps.observe?.('Forward', outcomeLabel(err), seconds(started));
          callback(toGrpcError(err));
        },
      );
    },
    // Each item as if it had come in its own Forward call (same logs and metrics); its answer is
    // written as soon as its PSP has answered, and the call ends with the last one.
    ForwardBatch(call) {
      const cancelled = new AbortController();
      call.on('cancelled', () => cancelled.abort());
      const started = process.hrtime.bigint();
      const items = call.request.items;
      let open = items.length;
      const done = (): void => {
        open -= 1;
        if (open === 0) call.end();
      };
      if (open === 0) call.end();
      items.forEach((item, index) => {
        if (item.request === null) {
          call.write({ index, errorJson: tesseraErrorToJson(new TesseraError('invalid_request')) });
          done();
          return;
        }
        const requestId = wellFormedRequestId(item.requestId);
        forwardToPsp(deps, item.request, { ...(requestId ? { requestId } : {}), signal: cancelled.signal }).then(
          (response) => {
            deps.observe?.('Forward', `psp_${Math.floor((response.status ?? 0) / 100)}xx`, seconds(started));
            if (!cancelled.signal.aborted) call.write({ index, response });
            done();
          },
          (err: unknown) => {
            deps.observe?.('Forward', outcomeLabel(err), seconds(started));
            if (!cancelled.signal.aborted) call.write({ index, errorJson: tesseraErrorToJson(err) });
            done();
          },
        );
      });
    },
    DryRun(call, callback) {
      const requestId = requestIdFromMetadata(call.metadata);
      const started = process.hrtime.bigint();
      dryRunForward(deps, call.request, requestId ? { requestId } : {}).then(
        (res) => {
          deps.observe?.('DryRun', 'ok', seconds(started));
          callback(null, res);
        },
        (err: unknown) => {
          deps.observe?.('DryRun', outcomeLabel(err), seconds(started));
          callback(toGrpcError(err));
        },
      );
    },
    Ready(_call, callback) {
      deps.vault.ready().then(
        (state) => callback(null, state),
        () => callback(null, { ready: false, detail: 'vault unreachable' }),
      );
    },
  };
}

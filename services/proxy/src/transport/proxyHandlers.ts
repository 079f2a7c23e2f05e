import { outcomeLabel, toGrpcError, type Logger, type RpcObserver } from '@tessera/common';
import { requestIdFromMetadata, type ProxyHandlers } from '@tessera/protos';
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

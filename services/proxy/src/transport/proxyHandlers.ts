import { toGrpcError, type Logger } from '@tessera/common';
import { requestIdFromMetadata, type ProxyHandlers } from '@tessera/protos';
import { dryRunForward } from '../app/dryRun';
import { forwardToPsp, type ForwardDeps } from '../app/forward';
import type { VaultPort } from './vaultClient';

export interface HandlerDeps extends ForwardDeps {
  vault: Pick<VaultPort, 'render' | 'preview' | 'ready'>;
  logger: Logger;
}

export function createProxyHandlers(deps: HandlerDeps): ProxyHandlers {
  return {
    Forward(call, callback) {
      const requestId = requestIdFromMetadata(call.metadata);
      // When the gateway gives up (deadline, client gone), stop talking to the PSP too.
      const cancelled = new AbortController();
      call.on('cancelled', () => cancelled.abort());
      forwardToPsp(deps, call.request, { ...(requestId ? { requestId } : {}), signal: cancelled.signal }).then(
        (res) => callback(null, res),
        (err: unknown) => callback(toGrpcError(err)),
      );
    },
    DryRun(call, callback) {
      const requestId = requestIdFromMetadata(call.metadata);
      dryRunForward(deps, call.request, requestId ? { requestId } : {}).then(
        (res) => callback(null, res),
        (err: unknown) => callback(toGrpcError(err)),
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

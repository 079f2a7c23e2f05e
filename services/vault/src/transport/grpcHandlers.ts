import type * as grpc from '@grpc/grpc-js';
import { outcomeLabel, tesseraErrorToJson, toGrpcError, TesseraError, type Logger, type RpcObserver } from '@tessera/common';
import { requestIdFromMetadata, wellFormedRequestId, type TokenizeRequest, type VaultHandlers } from '@tessera/protos';
import type { Vault } from '../vault';
import type { CardToTokenize } from '../domain/card';

type Unary<Req, Res> = grpc.handleUnaryCall<Req, Res>;

/**
 * Wraps a use case: request id on every log line, errors through toGrpcError. Requests and
 * replies are never logged — they carry card data or rendered bodies.
 */
function unary<Req, Res>(rpc: string, logger: Logger, handle: (request: Req) => Promise<Res>, observe?: RpcObserver): Unary<Req, Res> {
  return (call, callback) => {
    // Plain fields rather than logger.child(): a child logger per call costs more than the one
    // line it would write, and at the default level a successful call writes none.
    const fields = { rpc, requestId: requestIdFromMetadata(call.metadata) };
    const started = process.hrtime.bigint();
    const elapsedMs = (): number => Number((process.hrtime.bigint() - started) / 1_000_000n);
    handle(call.request).then(
      (reply) => {
        if (logger.isLevelEnabled('debug')) logger.debug({ ...fields, durationMs: elapsedMs() }, 'rpc ok');
        observe?.(rpc, 'ok', Number(process.hrtime.bigint() - started) / 1e9);
        callback(null, reply);
      },
      (err: unknown) => {
        const status = err instanceof TesseraError ? err.status : 500;
        observe?.(rpc, outcomeLabel(err), Number(process.hrtime.bigint() - started) / 1e9);
        if (status >= 500) logger.error({ ...fields, err, durationMs: elapsedMs() }, 'rpc failed');
        else logger.info({ ...fields, code: (err as TesseraError).code, durationMs: elapsedMs() }, 'rpc refused');
        callback(toGrpcError(err));
      },
    );
  };
}

/** A batch item without a request is refused by the card checks, like any empty card. */
function cardOf(req: TokenizeRequest | null): CardToTokenize {
  if (req === null) return { merchantId: '', number: '', holderName: '', expiryMonth: 0, expiryYear: 0, cvv: '' };
  return {
    merchantId: req.merchantId,
    number: req.number,
    holderName: req.holderName,
    expiryMonth: req.expiryMonth,
    expiryYear: req.expiryYear,
    cvv: req.cvv,
  };
}

/** `observe` counts every RPC by name and outcome (Prometheus, see main.ts); optional for tests. */
export function createVaultHandlers(vault: Vault, logger: Logger, observe?: RpcObserver): VaultHandlers {
  const unaryRpc = <Req, Res>(rpc: string, log: Logger, handle: (request: Req) => Promise<Res>) => unary(rpc, log, handle, observe);
  return {
    Tokenize: unaryRpc('Tokenize', logger, (req) => vault.tokenize(cardOf(req))),
    // Counted and logged per item under "Tokenize", as if each card had come in its own call.
    TokenizeBatch: unaryRpc('TokenizeBatch', logger, async (req) => {
      const started = process.hrtime.bigint();
      const outcomes = await vault.tokenizeBatch(req.items.map((item) => cardOf(item.request)));
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      return {
        results: outcomes.map((outcome, i) => {
          if (!(outcome instanceof TesseraError)) {
            observe?.('Tokenize', 'ok', seconds);
            return { record: outcome };
          }
          observe?.('Tokenize', outcomeLabel(outcome), seconds);
          logger.info({ rpc: 'Tokenize', requestId: wellFormedRequestId(req.items[i]?.requestId), code: outcome.code }, 'rpc refused');
          return { errorJson: tesseraErrorToJson(outcome) };
        }),
      };
    }),
    GetToken: unaryRpc('GetToken', logger, (req) => vault.getToken(req.merchantId, req.token)),
    DeleteToken: unaryRpc('DeleteToken', logger, async (req) => {
      await vault.deleteToken(req.merchantId, req.token);
      return {};
    }),
    Render: unaryRpc('Render', logger, async (req) => ({
      body: await vault.render(req.merchantId, req.token, req.template, req.contentType),
    })),
    Preview: unaryRpc('Preview', logger, (req) => vault.preview(req.merchantId, req.token, req.template, req.contentType)),
    Ready: unaryRpc('Ready', logger, async () => {
      const health = await vault.ready();
      return { ready: health.ok, detail: health.detail };
    }),
  };
}

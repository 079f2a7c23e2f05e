import type * as grpc from '@grpc/grpc-js';
import { outcomeLabel, TesseraError, type Logger, type RpcObserver } from '@tessera/common';
import {
  answerUnary,
  CallerNotAllowedError,
  peerServiceNames,
  refusedItem,
  requestIdFromMetadata,
  wellFormedRequestId,
  modeFromWire,
  tokenizeRequestFromWire,
  type TokenRecord__Output,
  type VaultHandlers,
} from '@tessera/protos';
import type { CvcSessionStore } from '@tessera/merchant-data';
import { tokenizeAs, type VaultCaller } from '../app/callers';
import { attachCvv } from '../app/cvcGrants';
import type { MerchantCas } from '../app/merchantCa';
import { renderRoute } from '../app/renderRoute';
import type { Vault } from '../app/vault';
import type { CardToTokenize, TokenOwner } from '../domain/card';
import { deliveryOf } from './delivery';

type Unary<Req, Res> = grpc.handleUnaryCall<Req, Res>;

/**
 * A refusal (4xx: expected, its code is enough), a caller asking beyond its rights (a service
 * misbehaving or compromised: operators should look), or a failure (5xx: with the error, for operators).
 */
function logFailure(logger: Logger, fields: Record<string, unknown>, err: unknown): void {
  if (err instanceof TesseraError && err.status < 500) logger.info({ ...fields, code: err.code }, 'rpc refused');
  else if (err instanceof CallerNotAllowedError) logger.warn({ ...fields, refused: err.message }, 'caller not allowed');
  else logger.error({ ...fields, err }, 'rpc failed');
}

/**
 * How long the vault may work on a call before it must answer: a little before the caller's gRPC
 * deadline (10 %, at least 50 ms, for the answer to travel), so a slow card store reaches the
 * caller as the vault's own 503 rather than as its deadline passing (which the caller can only read
 * as a vault that did not answer at all, docs/failure-modes.md "Vault hung"). Undefined when
 * the caller set no deadline.
 */
export function handlingBudgetMs(deadline: Date | number, now = Date.now()): number | undefined {
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  if (!Number.isFinite(at)) return undefined;
  const remaining = at - now;
  return Math.max(0, remaining - Math.max(50, Math.round(remaining * 0.1)));
}

/**
 * Wraps a use case: request id on every log line, errors through answerUnary, and an answer
 * within the caller's deadline (handlingBudgetMs). Requests and replies are never logged — they
 * carry card data or rendered bodies.
 */
function unary<Req, Res>(
  rpc: string,
  logger: Logger,
  handle: (request: Req, call: grpc.ServerUnaryCall<Req, Res>) => Promise<Res>,
  observe?: RpcObserver,
): Unary<Req, Res> {
  return (call, callback) => {
    // Plain fields rather than logger.child(): a child logger per call costs more than the one
    // line it would write, and at the default level a successful call writes none.
    const fields = { rpc, requestId: requestIdFromMetadata(call.metadata) };
    const started = process.hrtime.bigint();
    const elapsedMs = (): number => Number((process.hrtime.bigint() - started) / 1_000_000n);
    const budgetMs = handlingBudgetMs(call.getDeadline());
    answerUnary(callback, handle(call.request, call), {
      // What is still running then is abandoned: a token not yet answered is never handed out.
      budget:
        budgetMs === undefined
          ? undefined
          : { ms: budgetMs, error: () => new TesseraError('service_unavailable', { message: 'The card store did not answer in time.' }) },
      failed: (err) => {
        const outcome = err instanceof CallerNotAllowedError ? 'caller_not_allowed' : outcomeLabel(err);
        observe?.(rpc, outcome, Number(process.hrtime.bigint() - started) / 1e9);
        logFailure(logger, { ...fields, durationMs: elapsedMs() }, err);
      },
      ok: () => {
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const durationMs = elapsedMs();
        const delivered = deliveryOf(call.metadata);
        // "ok" only once the reply has gone out: a render the caller never received (it cancelled,
        // its deadline passed, the reply could not be written) is not a success in logs or metrics.
        void (delivered ?? Promise.resolve(true)).then((ok) => {
          if (ok) {
            if (logger.isLevelEnabled('debug')) logger.debug({ ...fields, durationMs }, 'rpc ok');
            observe?.(rpc, 'ok', seconds);
          } else {
            logger.warn({ ...fields, durationMs, outcome: 'not_delivered' }, 'rpc answer not delivered');
            observe?.(rpc, 'not_delivered', seconds);
          }
        });
      },
    });
  };
}

/** A batch item without a request is refused by the card checks, like any empty card. */
function cardOf(wire: Parameters<typeof tokenizeRequestFromWire>[0] | null): CardToTokenize {
  if (wire === null) return { merchantId: '', number: '', holderName: '', expiryMonth: 0, expiryYear: 0, cvv: '', mode: '' };
  return tokenizeRequestFromWire(wire);
}

/** Merchant and mode as the caller sent them; the vault refuses a mode it does not know (an older caller's ""). */
function ownerOf(req: { merchantId: string } & Parameters<typeof modeFromWire>[0]): TokenOwner {
  return { merchantId: req.merchantId, mode: modeFromWire(req) };
}

export interface VaultHandlerOptions {
  /** Where CVC sessions are claimed (AttachCvv with cvc_session); without it such an attach is refused as unavailable. */
  cvcSessions?: CvcSessionStore;
  /** TLS_PEER_FIELDS: a caller whose certificate names it gets the fields service's rights (app/callers.ts). Default `fields`. */
  fieldsName?: string;
  /** TLS_PEER_INBOUND: a caller whose certificate names it gets the inbound service's rights (app/callers.ts). Default `inbound`. */
  inboundName?: string;
  now?: () => Date;
  /** The merchants' forward-proxy CAs (IssueHostCertificate, GetCaCertificate). */
  cas?: MerchantCas;
}

/** For a vault run without a session store (tests): a grant it cannot check is not granted, and nothing is attached. */
const NO_CVC_SESSIONS: CvcSessionStore = {
  create: () => Promise.reject(new TesseraError('service_unavailable')),
  claim: () => Promise.reject(new TesseraError('service_unavailable')),
  release: () => Promise.resolve(),
};

/** `observe` counts every RPC by name and outcome (Prometheus, see main.ts); optional for tests. */
export function createVaultHandlers(vault: Vault, logger: Logger, observe?: RpcObserver, options: VaultHandlerOptions = {}): VaultHandlers {
  const fieldsName = options.fieldsName ?? 'fields';
  // The names the TLS handshake verified (none in plaintext): the caller policy already chose the RPCs.
  // Read only by the RPCs whose rules depend on it, so the others do not pay for it.
  const inboundName = options.inboundName ?? 'inbound';
  const callerOf = (call: Parameters<typeof peerServiceNames>[0]): VaultCaller => {
    const names = peerServiceNames(call);
    return names.includes(fieldsName) ? 'fields' : names.includes(inboundName) ? 'inbound' : 'service';
  };
  const cvcAttach = { vault, grants: options.cvcSessions ?? NO_CVC_SESSIONS, now: options.now ?? (() => new Date()) };
  const unaryRpc = <Req, Res>(rpc: string, log: Logger, handle: (request: Req, call: grpc.ServerUnaryCall<Req, Res>) => Promise<Res>) =>
    unary(rpc, log, handle, observe);
  /**
   * One item of a batch RPC, counted and logged under the single RPC's name as if it had come in
   * its own call, so metrics and logs read the same whether the caller batched or not.
   */
  const report = <T, R>(
    rpc: string,
    requestId: string | undefined,
    started: bigint,
    outcome: T | Error,
    answer: (value: T) => R,
  ): R | ReturnType<typeof refusedItem> => {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const fields = { rpc, requestId: wellFormedRequestId(requestId) };
    if (!(outcome instanceof Error)) {
      observe?.(rpc, 'ok', seconds);
      return answer(outcome);
    }
    observe?.(rpc, outcomeLabel(outcome), seconds);
    logFailure(logger, fields, outcome);
    return refusedItem(outcome);
  };
  return {
    Tokenize: unaryRpc('Tokenize', logger, (req, call) => tokenizeAs(vault, callerOf(call), cardOf(req))),
    TokenizeBatch: unaryRpc('TokenizeBatch', logger, async (req) => {
      const started = process.hrtime.bigint();
      const outcomes = await vault.tokenizeBatch(req.items.map((item) => cardOf(item.request)));
      return {
        results: outcomes.map((outcome, i) =>
          report('Tokenize', req.items[i]?.requestId, started, outcome, (record: TokenRecord__Output) => ({ record })),
        ),
      };
    }),
    GetToken: unaryRpc('GetToken', logger, (req) => vault.getToken(ownerOf(req), req.token)),
    DeleteToken: unaryRpc('DeleteToken', logger, async (req) => {
      await vault.deleteToken(ownerOf(req), req.token);
      return {};
    }),
    RetainToken: unaryRpc('RetainToken', logger, (req) => vault.retainToken(ownerOf(req), req.token)),
    Render: unaryRpc('Render', logger, async (req) => ({
      body: await vault.render(ownerOf(req), req.token, req.template, req.contentType),
    })),
    RenderBatch: unaryRpc('RenderBatch', logger, async (req) => {
      const started = process.hrtime.bigint();
      const outcomes = await Promise.all(
        req.items.map(({ request }) =>
          request === null
            ? new TesseraError('token_not_found')
            : vault
                .render(ownerOf(request), request.token, request.template, request.contentType)
                .catch((err: unknown) => (err instanceof Error ? err : new TesseraError('internal_error'))),
        ),
      );
      return {
        results: outcomes.map((outcome, i) => report('Render', req.items[i]?.requestId, started, outcome, (body: Buffer) => ({ body }))),
      };
    }),
    Preview: unaryRpc('Preview', logger, (req) => vault.preview(ownerOf(req), req.token, req.template, req.contentType)),
    // 0 and '' are "keep" (proto3 has no absent scalar; neither is a valid expiry or holder name).
    UpdateToken: unaryRpc('UpdateToken', logger, (req) =>
      vault.updateToken(ownerOf(req), req.token, {
        expiryMonth: req.expiryMonth === 0 ? undefined : req.expiryMonth,
        expiryYear: req.expiryYear === 0 ? undefined : req.expiryYear,
        holderName: req.holderName === '' ? undefined : req.holderName,
      }),
    ),
    AttachCvv: unaryRpc('AttachCvv', logger, (req, call) =>
      attachCvv(cvcAttach, callerOf(call), {
        owner: ownerOf(req),
        token: req.token,
        cvv: { value: req.cvv, isInteger: req.cvvIsInteger },
        cvcSession: req.cvcSession,
      }),
    ),
    RenderRoute: unaryRpc('RenderRoute', logger, async (req) => {
      const rendered = await renderRoute(vault, {
        owner: ownerOf(req),
        routeJson: req.routeJson,
        contentType: req.contentType,
        body: req.body,
      });
      return { body: rendered.body, tokens: rendered.tokens };
    }),
    IssueHostCertificate: unaryRpc('IssueHostCertificate', logger, async (req) => {
      const leaf = await casOf(options).issueHostCertificate(req.merchantId, req.host, req.publicKeySpki);
      return { certificateChainPem: leaf.chainPem, notAfterUnix: Math.floor(leaf.notAfter.getTime() / 1000) };
    }),
    GetCaCertificate: unaryRpc('GetCaCertificate', logger, async (req) => ({
      certificatePem: await casOf(options).caCertificate(req.merchantId),
    })),
  };
}

/** A vault run without the CA store (tests of other RPCs) answers the CA's RPCs as unavailable. */
function casOf(options: VaultHandlerOptions): MerchantCas {
  if (options.cas === undefined) throw new TesseraError('service_unavailable', { message: 'The forward-proxy CA is not configured.' });
  return options.cas;
}

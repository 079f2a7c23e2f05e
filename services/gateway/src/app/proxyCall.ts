import { TesseraError, type Logger } from '@tessera/common';
import type { DryRunReport, ForwardCall, ForwardResponse__Output } from '@tessera/protos';
import {
  type ApiKeyRecord,
  buildDetokenizationRecord,
  type DetokenizationLog,
  type MerchantSettings,
  type MerchantSettingsReader,
  type ProxyCallFacts,
} from '@tessera/merchant-data';
import { parseProxyRequest } from '../domain/requestSchemas';
import type { ProxyApi } from './ports';

/**
 * POST /v1/proxy and its dry run: a request to a PSP with a token in it, sent by the proxy (which
 * enforces the merchant's PSP host allowlist and renders the card), and audited whenever it asks
 * for card data. Transport parses the request and passes the PSP's answer through.
 */
export interface ProxyCallDeps {
  proxy: Pick<ProxyApi, 'forward' | 'dryRun'>;
  logger: Logger;
  detokenizations?: DetokenizationLog | undefined;
  merchantSettings?: MerchantSettingsReader | undefined;
}

export interface ProxyCaller {
  key: Pick<ApiKeyRecord, 'id' | 'merchantId' | 'mode'>;
  requestId: string;
  /** The route, for the log line of a failed audit write. */
  route: string | null;
  /** The merchant's PSP host allowlist, often read alongside authentication (readPspHosts); a read failure fails the call (503). */
  allowedHosts: Promise<string[]>;
  /** Told the call as parsed, for the request log; the PSP's status and time are filled in when it answers. */
  noteCall?: (call: ProxyCallFacts) => void;
}

/** The merchant's PSP host allowlist: empty (any public host) without settings. */
export function pspHostsOf(settings: MerchantSettings | undefined): string[] {
  return settings?.pspHosts ?? [];
}

export async function readPspHosts(deps: Pick<ProxyCallDeps, 'merchantSettings'>, merchantId: string): Promise<string[]> {
  return deps.merchantSettings === undefined ? [] : pspHostsOf(await deps.merchantSettings.get(merchantId));
}

function forwardRequestOf(caller: ProxyCaller, body: Record<string, unknown>, allowedHosts: string[]): ForwardCall {
  const input = parseProxyRequest(body);
  return {
    allowedHosts,
    merchantId: caller.key.merchantId,
    mode: caller.key.mode,
    token: input.token,
    method: input.method,
    url: input.pspUrl,
    headers: Object.entries(input.pspHeaders).map(([name, value]) => ({ name, value })),
    bodyTemplate: input.pspBody ?? '',
    hasBody: input.pspBody !== undefined,
  };
}

/** The call as the request log shows it (merchant-data's domain/requestLog.ts masks it later). */
function noteCall(caller: ProxyCaller, request: ForwardCall): ProxyCallFacts {
  const call: ProxyCallFacts = {
    pspUrl: request.url,
    method: request.method,
    token: request.token,
    bodyTemplate: request.hasBody ? request.bodyTemplate : null,
    headerNames: request.headers.map((h) => h.name),
    pspStatus: null,
    pspMs: null,
  };
  caller.noteCall?.(call);
  return call;
}

/** One line of the detokenization audit, as the gateway knows it when the call is over. */
export interface DetokenizationFacts {
  requestId: string;
  /** The route, for the log line of a failed audit write. */
  route: string | null;
  merchantId: string;
  keyId: string;
  token: string;
  pspUrl: string;
  method: string;
  status: number;
  code: string | null;
}

/**
 * Writes one audit entry without holding up the answer; a failed write is logged (ids only).
 * Shared by /v1/proxy and the forward proxy.
 */
export function recordDetokenization(deps: Pick<ProxyCallDeps, 'detokenizations' | 'logger'>, facts: DetokenizationFacts): void {
  if (deps.detokenizations === undefined) return;
  const { route, ...fields } = facts;
  const record = buildDetokenizationRecord({ ...fields, now: new Date() });
  deps.detokenizations.append(record).catch((err: unknown) => {
    deps.logger.error({ err, requestId: facts.requestId, auditId: record.id, route }, 'could not write the detokenization audit entry');
  });
}

/** Every call that asks the vault to render card data (a body was given) is audited, whatever its outcome. */
function audit(deps: ProxyCallDeps, caller: ProxyCaller, request: ForwardCall, status: number, code: string | null): void {
  if (!request.hasBody) return;
  recordDetokenization(deps, {
    requestId: caller.requestId,
    route: caller.route,
    merchantId: request.merchantId,
    keyId: caller.key.id,
    token: request.token,
    pspUrl: request.url,
    method: request.method,
    status,
    code,
  });
}

/** POST /v1/proxy: the PSP's answer, as the proxy got it. */
export async function forwardToPsp(
  deps: ProxyCallDeps,
  caller: ProxyCaller,
  body: Record<string, unknown>,
): Promise<ForwardResponse__Output> {
  const request = forwardRequestOf(caller, body, await caller.allowedHosts);
  const call = noteCall(caller, request);
  let result: ForwardResponse__Output;
  try {
    result = await deps.proxy.forward(request, { requestId: caller.requestId });
  } catch (err) {
    const error = err instanceof TesseraError ? err : new TesseraError('internal_error', { cause: err });
    audit(deps, caller, request, error.status, error.code);
    throw err;
  }
  audit(deps, caller, request, result.status, null);
  call.pspStatus = result.status;
  call.pspMs = result.pspMs;
  return result;
}

/** POST /v1/proxy/dry-run: same body as forward; what would be sent, masked. The PSP is never contacted. */
export async function dryRunProxyCall(deps: ProxyCallDeps, caller: ProxyCaller, body: Record<string, unknown>): Promise<DryRunReport> {
  const request = forwardRequestOf(caller, body, await caller.allowedHosts);
  noteCall(caller, request);
  return deps.proxy.dryRun(request, { requestId: caller.requestId });
}

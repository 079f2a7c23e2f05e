import { performance } from 'node:perf_hooks';
import { Agent, type Dispatcher } from 'undici';
import { TesseraError, withDeadline } from '@tessera/common';
import type { ConnectPolicy, Destination } from '../domain/destinationPolicy';
import { filterResponseHeaders, pairRawHeaders, type HeaderEntry } from '../domain/headers';
import type { PspMethod } from '../domain/method';
import { createAddressPins, type AddressPins } from './addressPins';
import { createDnsResolver, resolveHost, type ResolvedAddress, type Resolver } from './resolver';
import { createSafeConnector, type SafeConnectorOptions } from './safeConnector';

export interface EgressOptions {
  /** The destination policy (domain/destinationPolicy.ts): the egress only asks it, it has no rules of its own. */
  policy: ConnectPolicy;
  connectTimeoutMs: number;
  /** Total time for one exchange: connect, send, headers and the whole body. */
  timeoutMs: number;
  maxResponseBytes: number;
  resolve?: Resolver;
  tls?: SafeConnectorOptions['tls'];
}

/** One shared undici Agent (keep-alive pools per PSP origin) plus the limits it enforces. */
export interface PspEgress {
  readonly agent: Agent;
  /**
   * The same connector (policy, resolver, pins) without the response size limit, which undici
   * sets per agent: for answers streamed on as they arrive (upstreamExchange.ts), never held whole.
   */
  readonly streamingAgent: Agent;
  readonly connectTimeoutMs: number;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  readonly policy: ConnectPolicy;
  readonly resolve: Resolver;
  readonly pins: AddressPins;
}

export function createPspEgress(opts: EgressOptions): PspEgress {
  const resolve = opts.resolve ?? createDnsResolver();
  const pins = createAddressPins();
  const connect = createSafeConnector({
    policy: opts.policy,
    resolve,
    pins,
    connectTimeoutMs: opts.connectTimeoutMs,
    ...(opts.tls ? { tls: opts.tls } : {}),
  });
  const agent = new Agent({
    connect,
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
    // undici stops reading and fails the request past this many body bytes (also when a
    // Content-Length announces more), before the bytes are buffered.
    maxResponseSize: opts.maxResponseBytes,
  });
  return {
    agent,
    streamingAgent: new Agent({ connect, headersTimeout: opts.timeoutMs, bodyTimeout: opts.timeoutMs }),
    connectTimeoutMs: opts.connectTimeoutMs,
    timeoutMs: opts.timeoutMs,
    maxResponseBytes: opts.maxResponseBytes,
    policy: opts.policy,
    resolve,
    pins,
  };
}

export async function closePspEgress(egress: PspEgress): Promise<void> {
  await Promise.all([egress.agent.close(), egress.streamingAgent.close()]);
}

/** A destination that passed the whole policy, with the addresses the pre-flight judged. */
export interface CheckedDestination extends Destination {
  readonly addresses: readonly ResolvedAddress[];
}

/**
 * The egress pre-flight, run after the URL decision and before the vault renders any card data
 * (a render uses up a one-time CVV): resolves the host (every address, both families) and
 * refuses the destination unless the policy passes every address. sendToPsp then connects to
 * exactly these addresses (see addressPins.ts), so a destination that passes here is not
 * refused at connect time for a DNS answer that changed in between.
 */
export async function preflightDestination(egress: PspEgress, destination: Destination): Promise<CheckedDestination> {
  // A literal is its own only address: judged as it is, without the DNS deadline's timer and race.
  if (destination.isIpLiteral) {
    egress.policy.checkAddresses([destination.hostname], true);
    return { ...destination, addresses: await resolveHost(destination.hostname, egress.resolve) };
  }
  let addresses: ResolvedAddress[];
  try {
    addresses = await withDeadline(
      resolveHost(destination.hostname, egress.resolve),
      egress.connectTimeoutMs,
      () => new Error('DNS lookup timed out'),
    );
  } catch (err) {
    throw new TesseraError('psp_unreachable', { message: 'The PSP host could not be resolved.', cause: err });
  }
  egress.policy.checkAddresses(
    addresses.map((a) => a.address),
    false,
  );
  return { ...destination, addresses };
}

/**
 * Lets the caller of sendToPsp stop an exchange (e.g. the gateway gave up on the Forward call).
 * A plain flag and callback slot rather than an AbortSignal: grpc-js reports every call as
 * cancelled when its stream closes, also after a successful answer, and an AbortController
 * per call (plus the DOMException its reason-less abort creates) cost more than the rest of
 * the cancellation handling together.
 */
export interface PspCancellation {
  /** Set by the caller once it has given up; an exchange is not started after that. */
  cancelled: boolean;
  /** Installed by sendToPsp while an exchange is in flight; the caller invokes it on cancel. */
  onCancel?: (() => void) | undefined;
}

/** Marks `cancellation` as cancelled and stops the exchange in flight, if any. */
export function cancelPspExchange(cancellation: PspCancellation): void {
  cancellation.cancelled = true;
  cancellation.onCancel?.();
}

/** A caller's deadline for one exchange (0: none given), never beyond the egress's own (PSP_TIMEOUT_MS). */
export function cappedTimeoutMs(egress: PspEgress, requestedMs: number): number {
  return requestedMs > 0 ? Math.min(requestedMs, egress.timeoutMs) : egress.timeoutMs;
}

export interface PspRequest {
  /** From preflightDestination: the connection goes to its addresses. */
  destination: CheckedDestination;
  method: PspMethod;
  /** Already filtered (see filterRequestHeaders). */
  headers: readonly HeaderEntry[];
  body?: Buffer;
  /** Stops the exchange, e.g. when the caller of Forward gives up. */
  cancellation?: PspCancellation;
  /** A tighter deadline or size limit than the egress's own (a merchant's completion endpoint). */
  timeoutMs?: number;
  maxResponseBytes?: number;
  /**
   * Past maxResponseBytes, answer with the status and the bytes read so far and close the
   * connection, instead of failing (a webhook receiver's answer matters only by its status).
   */
  truncateResponse?: boolean;
}

export interface PspResponse {
  status: number;
  headers: HeaderEntry[];
  body: Buffer;
  /** Milliseconds from sending the request to the last body byte. */
  pspMs: number;
}

const UNREACHABLE_MESSAGE = 'The PSP could not be reached.';

function* causeChain(err: unknown): Generator<unknown> {
  let current: unknown = err;
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth++) {
    yield current;
    // Happy-eyeballs connects report every attempt in an AggregateError.
    if (current instanceof AggregateError) for (const inner of current.errors) yield inner;
    current = (current as { cause?: unknown }).cause;
  }
}

/** Maps whatever undici or the socket threw to the product's PSP error codes. */
export function toPspError(err: unknown): TesseraError {
  for (const e of causeChain(err)) if (e instanceof TesseraError) return e;
  const code = (err as { code?: unknown } | null)?.code;
  switch (code) {
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return new TesseraError('psp_timeout', { cause: err });
    case 'UND_ERR_RES_EXCEEDED_MAX_SIZE':
      return new TesseraError('psp_response_too_large', { cause: err });
    case 'UND_ERR_CONNECT_TIMEOUT':
      // No TCP/TLS connection within PSP_CONNECT_TIMEOUT_MS: the PSP is unreachable, it never
      // got the request (unlike psp_timeout, where it may have acted on it).
      return new TesseraError('psp_unreachable', { message: 'The PSP did not accept a connection in time.', cause: err });
    case 'UND_ERR_INVALID_ARG':
    case 'UND_ERR_NOT_SUPPORTED':
      return new TesseraError('internal_error', { cause: err });
    default:
      // Refused, reset, TLS failures, sockets closed mid-response: the request did not complete.
      return new TesseraError('psp_unreachable', { message: UNREACHABLE_MESSAGE, cause: err });
  }
}

/**
 * One exchange as an undici dispatch handler: the body is collected straight from the socket's
 * chunks. `agent.request()` would wrap it in an AsyncResource, a Readable stream, an async
 * iterator and an AbortSignal listener, which cost more CPU per call than the HTTP parsing.
 */
class PspExchange implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  /** Why the exchange was stopped on our side (deadline, size limit, cancel); wins over undici's error. */
  private reason: TesseraError | undefined;
  private settled = false;
  private status = 0;
  private rawHeaders: readonly (Buffer | string)[] = [];
  private readonly chunks: Buffer[] = [];
  private total = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly started = performance.now();

  constructor(
    private readonly maxResponseBytes: number,
    timeoutMs: number,
    private readonly cancellation: PspCancellation | undefined,
    private readonly resolve: (res: PspResponse) => void,
    private readonly reject: (err: TesseraError) => void,
    private readonly truncate = false,
  ) {
    // The whole exchange, body included, has one deadline; undici's headers and body timeouts
    // only bound the wait for each step.
    this.timer = setTimeout(() => this.stop(new TesseraError('psp_timeout')), timeoutMs);
    if (cancellation !== undefined) cancellation.onCancel = () => this.stop(cancelledError());
  }

  /** Ends the exchange now with `reason`, and tears down the request if undici has started it. */
  stop(reason: TesseraError): void {
    if (this.settled) return;
    this.reason = reason;
    this.controller?.abort(reason);
    this.fail(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.reason !== undefined) controller.abort(this.reason);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number): void {
    // 1xx interim answers are skipped; the final status follows.
    if (statusCode < 200) return;
    this.status = statusCode;
    // A flat list in wire order with the PSP's spelling, so repeated headers stay separate.
    this.rawHeaders = (controller.rawHeaders as readonly (Buffer | string)[] | null | undefined) ?? [];
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    if (this.truncate && this.total + chunk.length > this.maxResponseBytes) {
      this.chunks.push(chunk.subarray(0, this.maxResponseBytes - this.total));
      this.total = this.maxResponseBytes;
      this.onResponseEnd();
      this.controller?.abort(new TesseraError('psp_response_too_large'));
      return;
    }
    this.total += chunk.length;
    if (this.total > this.maxResponseBytes) {
      this.stop(new TesseraError('psp_response_too_large'));
      return;
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.settled) return;
    this.done();
    const { chunks } = this;
    this.resolve({
      status: this.status,
      headers: filterResponseHeaders(pairRawHeaders(this.rawHeaders)),
      // undici hands out each chunk as its own buffer, so a one-chunk body needs no copy.
      body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, this.total),
      pspMs: performance.now() - this.started,
    });
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, err: Error): void {
    this.fail(toPspError(this.reason ?? err));
  }

  private fail(err: TesseraError): void {
    if (this.settled) return;
    this.done();
    this.reject(err);
  }

  private done(): void {
    this.settled = true;
    clearTimeout(this.timer);
    if (this.cancellation !== undefined) this.cancellation.onCancel = undefined;
  }
}

export function cancelledError(): TesseraError {
  return new TesseraError('psp_unreachable', { message: 'The request was cancelled.' });
}

/**
 * Sends one request to the PSP and reads the whole answer. Redirects are never followed (a
 * 3xx comes back as it is), so a PSP cannot bounce the card data to a place the policy did
 * not check. Bodies are kept as exact bytes. While the exchange runs, the pre-flight's answer is
 * pinned for the host, so a new connection goes to an address that was checked.
 */
export function sendToPsp(egress: PspEgress, req: PspRequest): Promise<PspResponse> {
  if (req.cancellation?.cancelled) return Promise.reject(cancelledError());
  const { destination } = req;
  const release = destination.isIpLiteral ? undefined : egress.pins.hold(destination.hostname, destination.addresses);
  const exchanged = new Promise<PspResponse>((resolve, reject) => {
    const timeoutMs = req.timeoutMs ?? egress.timeoutMs;
    const exchange = new PspExchange(
      req.maxResponseBytes ?? egress.maxResponseBytes,
      timeoutMs,
      req.cancellation,
      resolve,
      reject,
      req.truncateResponse === true,
    );
    const { url } = destination;
    const headers: string[] = [];
    for (const h of req.headers) headers.push(h.name, h.value);
    egress.agent.dispatch(
      {
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: req.method,
        headers,
        body: req.body ?? null,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      },
      exchange,
    );
  });
  return release === undefined ? exchanged : exchanged.finally(release);
}

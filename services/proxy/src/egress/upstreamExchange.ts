import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { TesseraError } from '@tessera/common';
import { filterResponseHeaders, pairRawHeaders, type HeaderEntry } from '../domain/headers';
import { cancelledError, toPspError, type CheckedDestination, type PspCancellation, type PspEgress } from './pspEgress';

export interface UpstreamRequest {
  /** From preflightDestination: the connection goes to its addresses. */
  destination: CheckedDestination;
  /** A token method (parseUpstreamMethod). */
  method: string;
  /** Already filtered (see filterRequestHeaders). */
  headers: readonly HeaderEntry[];
  body: Buffer;
  /** Time to the head (connect, send, status and headers); then the longest silence within the body. */
  timeoutMs: number;
  /** Stops the exchange, e.g. when the caller of ForwardUpstream gives up; before or after the head. */
  cancellation?: PspCancellation;
}

/**
 * The upstream's answer as soon as its head has arrived. `body` yields the chunks as they come;
 * reading it is what lets more come (a full buffer pauses undici's parser, so the upstream's
 * socket stops too): the answer is never held whole, so it has no size limit. The body fails with
 * a TesseraError (psp_timeout after timeoutMs without a byte, psp_unreachable for a broken
 * connection or a cancel); destroying it aborts the exchange.
 */
export interface StreamedResponse {
  status: number;
  /** Hop-by-hop headers and content-length removed (filterResponseHeaders). */
  headers: HeaderEntry[];
  /** Milliseconds from sending the request to the head. */
  headMs: number;
  body: UpstreamBody;
}

/** The body of a StreamedResponse; `bytes` counts what arrived, for logs. */
export class UpstreamBody extends Readable {
  bytes = 0;
}

/** About four socket reads: enough to keep the upstream's socket busy while the caller reads. */
const BODY_BUFFER_BYTES = 256 * 1024;

/**
 * One streamed exchange as an undici dispatch handler (the controller API, which has pause and
 * resume). Until the head: one timer for the whole wait. After it: undici's body timeout, which
 * measures the upstream's silence and stands still while the caller is slow (the parser is paused
 * then, and the caller's own deadline or cancel bounds that).
 */
class UpstreamExchange implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  /** Why the exchange was stopped on our side (deadline, cancel, body dropped); wins over undici's error. */
  private reason: TesseraError | undefined;
  private settled = false;
  private body: UpstreamBody | undefined;
  private readonly timer: NodeJS.Timeout;
  private readonly started = performance.now();

  constructor(
    timeoutMs: number,
    private readonly cancellation: PspCancellation | undefined,
    private readonly resolve: (res: StreamedResponse) => void,
    private readonly reject: (err: TesseraError) => void,
    private readonly release: (() => void) | undefined,
  ) {
    this.timer = setTimeout(() => this.stop(new TesseraError('psp_timeout')), timeoutMs);
    if (cancellation !== undefined) cancellation.onCancel = () => this.stop(cancelledError());
  }

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
    if (statusCode < 200 || this.settled || this.body !== undefined) return;
    clearTimeout(this.timer);
    const body = new UpstreamBody({
      highWaterMark: BODY_BUFFER_BYTES,
      read: () => controller.resume(),
      // The reader let go of the body before its end: nobody wants the rest.
      destroy: (err, callback) => {
        this.stop(cancelledError());
        callback(err);
      },
    });
    this.body = body;
    const rawHeaders = (controller.rawHeaders as readonly (Buffer | string)[] | null | undefined) ?? [];
    this.resolve({
      status: statusCode,
      headers: filterResponseHeaders(pairRawHeaders(rawHeaders)),
      headMs: performance.now() - this.started,
      body,
    });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const { body } = this;
    if (this.settled || body === undefined) return;
    body.bytes += chunk.length;
    if (!body.push(chunk)) controller.pause();
  }

  onResponseEnd(): void {
    if (this.settled) return;
    this.done();
    this.body?.push(null);
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, err: Error): void {
    this.fail(toPspError(this.reason ?? err));
  }

  private fail(err: TesseraError): void {
    if (this.settled) return;
    this.done();
    if (this.body === undefined) this.reject(err);
    else this.body.destroy(err);
  }

  private done(): void {
    this.settled = true;
    clearTimeout(this.timer);
    if (this.cancellation !== undefined) this.cancellation.onCancel = undefined;
    this.release?.();
  }
}

/**
 * Sends one request and resolves with the answer's head, the body following as a stream (see
 * StreamedResponse). As sendToPsp: redirects are never followed (a 3xx comes back as it is), the
 * request body is sent as exact bytes, and the pre-flight's addresses are pinned for the host
 * until the exchange ends, body included.
 */
export function streamFromUpstream(egress: PspEgress, req: UpstreamRequest): Promise<StreamedResponse> {
  if (req.cancellation?.cancelled) return Promise.reject(cancelledError());
  const { destination } = req;
  const release = destination.isIpLiteral ? undefined : egress.pins.hold(destination.hostname, destination.addresses);
  return new Promise<StreamedResponse>((resolve, reject) => {
    const exchange = new UpstreamExchange(req.timeoutMs, req.cancellation, resolve, reject, release);
    const headers: string[] = [];
    for (const h of req.headers) headers.push(h.name, h.value);
    const { url } = destination;
    egress.streamingAgent.dispatch(
      {
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: req.method as Dispatcher.HttpMethod,
        headers,
        body: req.body.length > 0 ? req.body : null,
        headersTimeout: req.timeoutMs,
        bodyTimeout: req.timeoutMs,
      },
      exchange,
    );
  });
}

import { performance } from 'node:perf_hooks';
import { Agent } from 'undici';
import { TesseraError } from '@tessera/common';
import type { Cidr } from '../domain/addressPolicy';
import { assertAddressesAllowed, assertUrlPortAllowed, type Destination } from '../domain/destinationUrl';
import type { PortRange } from '../domain/portPolicy';
import { filterResponseHeaders, pairRawHeaders, type HeaderEntry } from '../domain/headers';
import type { PspMethod } from '../domain/method';
import { resolveHost, systemResolver, type Resolver } from './resolver';
import { createSafeConnector, type SafeConnectorOptions } from './safeConnector';

export interface EgressOptions {
  connectTimeoutMs: number;
  /** Total time for one exchange: connect, send, headers and the whole body. */
  timeoutMs: number;
  maxResponseBytes: number;
  allowlist: readonly Cidr[];
  /** Ports allowed besides 443 and 80 (PSP_ALLOWED_PORTS); absent: those two only. */
  allowedPorts?: readonly PortRange[];
  resolve?: Resolver;
  tls?: SafeConnectorOptions['tls'];
}

/** One shared undici Agent (keep-alive pools per PSP origin) plus the limits it enforces. */
export interface PspEgress {
  readonly agent: Agent;
  readonly connectTimeoutMs: number;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  readonly allowlist: readonly Cidr[];
  readonly allowedPorts: readonly PortRange[];
  readonly resolve: Resolver;
}

export function createPspEgress(opts: EgressOptions): PspEgress {
  const resolve = opts.resolve ?? systemResolver;
  const allowedPorts = opts.allowedPorts ?? [];
  const agent = new Agent({
    connect: createSafeConnector({
      allowlist: opts.allowlist,
      allowedPorts,
      resolve,
      connectTimeoutMs: opts.connectTimeoutMs,
      ...(opts.tls ? { tls: opts.tls } : {}),
    }),
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
    // undici stops reading and fails the request past this many body bytes (also when a
    // Content-Length announces more), before the bytes are buffered.
    maxResponseSize: opts.maxResponseBytes,
  });
  return {
    agent,
    connectTimeoutMs: opts.connectTimeoutMs,
    timeoutMs: opts.timeoutMs,
    maxResponseBytes: opts.maxResponseBytes,
    allowlist: opts.allowlist,
    allowedPorts,
    resolve,
  };
}

export async function closePspEgress(egress: PspEgress): Promise<void> {
  await egress.agent.close();
}

function withDeadline<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/**
 * The pre-flight address check, run before the vault renders any card data: resolves the
 * host and refuses the destination unless every address passes the policy. The connector
 * repeats the check at connect time; this one exists so a forbidden URL never causes a render.
 */
export async function checkDestinationAddresses(egress: PspEgress, destination: Destination): Promise<void> {
  // The port first: a refused port needs no DNS lookup.
  assertUrlPortAllowed(destination.url, egress.allowedPorts);
  let addresses: string[];
  try {
    const resolved = await withDeadline(
      resolveHost(destination.hostname, egress.resolve),
      egress.connectTimeoutMs,
      () => new Error('DNS lookup timed out'),
    );
    addresses = resolved.map((a) => a.address);
  } catch (err) {
    throw new TesseraError('psp_unreachable', { message: 'The PSP host could not be resolved.', cause: err });
  }
  assertAddressesAllowed(addresses, egress.allowlist, destination.isIpLiteral);
}

export interface PspRequest {
  destination: Destination;
  method: PspMethod;
  /** Already filtered (see filterRequestHeaders). */
  headers: readonly HeaderEntry[];
  body?: Buffer;
  /** Aborts the exchange, e.g. when the caller of Forward gives up. */
  signal?: AbortSignal;
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
 * Sends one request to the PSP and reads the whole answer. Redirects are never followed (a
 * 3xx comes back as it is), so a PSP cannot bounce the card data to a place the policy did
 * not check. Bodies are kept as exact bytes.
 */
export async function sendToPsp(egress: PspEgress, req: PspRequest): Promise<PspResponse> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new TesseraError('psp_timeout')), egress.timeoutMs);
  const onCallerAbort = (): void => controller.abort(new TesseraError('psp_unreachable', { message: 'The request was cancelled.' }));
  if (req.signal?.aborted) onCallerAbort();
  req.signal?.addEventListener('abort', onCallerAbort, { once: true });
  const started = performance.now();
  try {
    const { url } = req.destination;
    const res = await egress.agent.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: req.method,
      headers: req.headers.flatMap((h) => [h.name, h.value]),
      body: req.body ?? null,
      signal: controller.signal,
      headersTimeout: egress.timeoutMs,
      bodyTimeout: egress.timeoutMs,
      // A flat list in wire order with the PSP's spelling, so repeated headers stay separate.
      responseHeaders: 'raw',
    });
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > egress.maxResponseBytes) {
        res.body.destroy();
        throw new TesseraError('psp_response_too_large');
      }
      chunks.push(chunk);
    }
    const raw = res.headers as unknown as string[];
    return {
      status: res.statusCode,
      headers: filterResponseHeaders(pairRawHeaders(raw)),
      body: Buffer.concat(chunks, total),
      pspMs: performance.now() - started,
    };
  } catch (err) {
    throw toPspError(controller.signal.aborted && controller.signal.reason instanceof TesseraError ? controller.signal.reason : err);
  } finally {
    clearTimeout(timer);
    req.signal?.removeEventListener('abort', onCallerAbort);
  }
}

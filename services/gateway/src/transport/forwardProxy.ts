import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import { Counter, Histogram, type Registry } from 'prom-client';
import { isErrorCode, isHttpFieldValue, isHttpToken, parseCidrList, TesseraError, type Listener, type Logger } from '@tessera/common';
import type { ForwardRouteAnswer } from '@tessera/protos';
import type { ApiKeyRecord, ProxyCallFacts } from '@tessera/merchant-data';
import type { RouteDocument } from '@tessera/routes';
import {
  chooseRequestId,
  readBoundedBody,
  resolveClientIp,
  writeErrorEnvelope,
  type Authentication,
  type SecretKeyAttempt,
} from '@tessera/edge';
import { FORWARD_PROXY_ROUTE, outboundRouteFor, sendTunnelRequest, type ForwardProxyDeps } from '../app/forwardProxy';
import type { HostCertificates } from '../app/hostCertificates';
import type { RequestLogRecorder } from '../app/requestLog';
import {
  connectTargetOf,
  hostMatchesTarget,
  proxyPasswordOf,
  tunnelRequestHeaders,
  type ConnectTarget,
} from '../domain/forwardProxyRequest';
import { unlikeTesserasHeaderName } from '../domain/pspResponseHeaders';
import { KEEP_ALIVE_TIMEOUT_MS } from '@tessera/edge';

/**
 * The forward proxy's listener (FORWARD_PROXY_PORT, docs/proxies.md, ADR 0013): an HTTP CONNECT
 * proxy for the PSP hosts of a merchant's outbound routes.
 *
 * 1. CONNECT with the secret key as the Proxy-Authorization password: the same authentication as
 *    /v1 (key lookup, IP allowlist, rate limit); 407 with Proxy-Authenticate when it fails.
 * 2. The target host must be on an outbound route of the key's merchant and mode: else 403,
 *    answered in the clear before any TLS.
 * 3. TLS is terminated with a leaf for that host (app/hostCertificates.ts), SNI naming the same host.
 * 4. The requests in the tunnel are parsed by Node's own HTTP/1.1 parser (a second http.Server
 *    fed the TLS socket: strict framing, no obs-fold, keep-alive), each authenticated again (a
 *    revoked key or a deleted route stops an open tunnel at its next request) and sent by the
 *    proxy's ForwardRoute. Tessera's own answers in the tunnel are the error envelope with
 *    `x-tessera-error`; the PSP's pass through.
 * Every request (the CONNECTs refused after the key was known included) lands in the request log.
 */

export interface ForwardProxyConfig {
  HOST: string;
  FORWARD_PROXY_PORT: number;
  BODY_LIMIT_BYTES: number;
  TRUSTED_PROXIES: readonly string[];
  PROXY_TIMEOUT_MS: number;
}

export interface ForwardProxyServerDeps {
  config: ForwardProxyConfig;
  logger: Logger;
  /** secretKeyAuthenticator(...) of @tessera/edge, as /v1 authenticates. */
  authenticate: (attempt: SecretKeyAttempt) => Promise<Authentication>;
  useCases: ForwardProxyDeps;
  certificates: Pick<HostCertificates<tls.SecureContext>, 'get'>;
  requestLog?: RequestLogRecorder | undefined;
  metrics?: Registry | undefined;
}

type Stage = 'connect' | 'request';

/**
 * tessera_forward_proxy_requests_total{stage,outcome,status} and
 * tessera_forward_proxy_request_duration_seconds{stage}. Labels from closed sets only: the stage,
 * `established`, a PSP status class or one of Tessera's error codes, the status. Never a merchant,
 * key, host or path: the request log has those, per merchant.
 */
function forwardProxyMetrics(registry: Registry) {
  const requests = new Counter({
    name: 'tessera_forward_proxy_requests_total',
    help: "Forward proxy CONNECTs and requests in tunnels answered, by stage, outcome (established, psp_2xx..psp_5xx, aborted or Tessera's error code) and status",
    labelNames: ['stage', 'outcome', 'status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'tessera_forward_proxy_request_duration_seconds',
    help: "Time to answer a CONNECT (key, route and leaf certificate) or a request in a tunnel (the PSP's time included)",
    labelNames: ['stage'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  return (stage: Stage, outcome: { status: number; code: string | null; aborted: boolean }, seconds: number | undefined): void => {
    const label = outcome.aborted
      ? 'aborted'
      : outcome.code !== null
        ? isErrorCode(outcome.code)
          ? outcome.code
          : 'other'
        : stage === 'connect'
          ? 'established'
          : `psp_${Math.floor(outcome.status / 100)}xx`;
    requests.inc({ stage, outcome: label, status: String(outcome.status) });
    if (seconds !== undefined) duration.observe({ stage }, seconds);
  };
}

/** Why a tunnel was opened: who, where, and the key to authenticate each of its requests with. */
interface Tunnel {
  presented: string | undefined;
  clientIp: string | undefined;
  target: ConnectTarget;
}

/** How long a client has to finish the TLS handshake once its CONNECT was answered. */
const HANDSHAKE_TIMEOUT_MS = 10_000;

const PROXY_AUTHENTICATE = 'Basic realm="Tessera"';

/**
 * The error envelope as raw bytes, for a socket no ServerResponse can be made for (the parser
 * refused what was sent): the same body and headers writeErrorEnvelope writes.
 */
function rawErrorAnswer(err: TesseraError): string {
  const requestId = chooseRequestId(undefined);
  const body = JSON.stringify({ error: { ...err.toJSON(), requestId } });
  return [
    `HTTP/1.1 ${err.status} ${http.STATUS_CODES[err.status] ?? ''}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    'x-content-type-options: nosniff',
    'cache-control: no-store',
    `x-tessera-error: ${err.code}`,
    `x-tessera-request-id: ${requestId}`,
    'connection: close',
    '',
    body,
  ].join('\r\n');
}

export interface ForwardProxyServer {
  listen(): Promise<string>;
  listener: Listener;
}

export function createForwardProxyServer(deps: ForwardProxyServerDeps): ForwardProxyServer {
  const { logger, config } = deps;
  const observe = deps.metrics ? forwardProxyMetrics(deps.metrics) : undefined;
  const trustedProxies = parseCidrList(config.TRUSTED_PROXIES);
  const tunnelsBySocket = new WeakMap<Socket, Tunnel>();
  const openTunnels = new Set<tls.TLSSocket>();
  let draining = false;
  let drained: (() => void) | undefined;

  const facts = (started: bigint) => ({ ms: Number(process.hrtime.bigint() - started) / 1e6 });
  const outcomeOf = (res: http.ServerResponse) => {
    const code = res.getHeader('x-tessera-error');
    return { status: res.statusCode, code: typeof code === 'string' ? code : null, aborted: !res.writableFinished };
  };

  /** One access line and one request log entry per answered request, as /v1 writes them. */
  function logRequest(
    outcome: { status: number; code: string | null; aborted: boolean },
    entry: { requestId: string; method: string; started: bigint; key: ApiKeyRecord | undefined; call?: ProxyCallFacts },
  ): void {
    const { ms } = facts(entry.started);
    const { status, code, aborted } = outcome;
    observe?.(entry.method === 'CONNECT' ? 'connect' : 'request', outcome, ms / 1000);
    logger.info(
      {
        method: entry.method,
        route: FORWARD_PROXY_ROUTE,
        status,
        ms: Math.round(ms * 10) / 10,
        requestId: entry.requestId,
        merchantId: entry.key?.merchantId ?? null,
        keyId: entry.key?.id ?? null,
        ...(aborted ? { aborted: true } : {}),
      },
      'request',
    );
    if (entry.key === undefined || deps.requestLog === undefined) return;
    deps.requestLog.record({
      at: new Date(),
      merchantId: entry.key.merchantId,
      requestId: entry.requestId,
      keyId: entry.key.id,
      mode: entry.key.mode,
      method: entry.method,
      route: FORWARD_PROXY_ROUTE,
      path: FORWARD_PROXY_ROUTE,
      status,
      code,
      ms,
      aborted,
      ...(entry.call ? { proxy: entry.call } : {}),
    });
  }

  function asTesseraError(err: unknown, requestId: string): TesseraError {
    if (err instanceof TesseraError) return err;
    logger.error({ err, requestId }, 'forward proxy failed');
    return new TesseraError('internal_error');
  }

  /** The key's authentication, as /v1's; its refusal in a form the caller can answer with. */
  async function authenticate(presented: string | undefined, clientIp: string | undefined, requestId: string) {
    return deps.authenticate({ presented, clientIp, origin: undefined, requestId });
  }

  /** The route that opens `target` for the key, or the 403 (a route the vault no longer knows of included). */
  async function routeOrRefusal(key: ApiKeyRecord, target: ConnectTarget): Promise<RouteDocument> {
    const route = await outboundRouteFor(deps.useCases.routes, key, target.host);
    if (route === undefined) throw new TesseraError('forward_proxy_host_forbidden');
    return route;
  }

  // ---- The CONNECT --------------------------------------------------------------------------

  async function onConnect(req: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => undefined);
    const started = process.hrtime.bigint();
    const requestId = chooseRequestId(req.headers['x-request-id']);
    let key: ApiKeyRecord | undefined;
    const refuse = (err: TesseraError): void => {
      const res = new http.ServerResponse(req);
      res.assignSocket(socket as Socket);
      res.shouldKeepAlive = false;
      res.setHeader('connection', 'close');
      if (err.status === 407) res.setHeader('proxy-authenticate', PROXY_AUTHENTICATE);
      res.once('finish', () => {
        logRequest(outcomeOf(res), { requestId, method: 'CONNECT', started, key });
        res.detachSocket(socket as Socket);
        socket.end();
      });
      writeErrorEnvelope(res, err, requestId);
    };
    try {
      if (draining) throw new TesseraError('service_unavailable');
      const clientIp = resolveClientIp(req.socket.remoteAddress, req.headers['x-forwarded-for'], trustedProxies);
      const presented = proxyPasswordOf(req.headers['proxy-authorization']);
      const authentication = await authenticate(presented, clientIp, requestId);
      if (authentication.record) key = authentication.record;
      if (!authentication.ok) {
        // A limit's 429 stays one (with Retry-After); every other refusal asks for credentials.
        const error = authentication.error;
        throw error.status === 429 ? error : new TesseraError('proxy_authentication_required', { message: error.message });
      }
      const target = connectTargetOf(req.url);
      if (target === undefined) {
        throw new TesseraError('invalid_request', { message: 'CONNECT takes a host name and port: CONNECT api.psp.example:443.' });
      }
      await routeOrRefusal(authentication.record, target);
      let secureContext: tls.SecureContext;
      try {
        secureContext = await deps.certificates.get(authentication.record.merchantId, target.host, { requestId });
      } catch (err) {
        // The vault reads the routes itself: one deleted since our read is refused there.
        if (err instanceof TesseraError && err.code === 'proxy_route_not_found') throw new TesseraError('forward_proxy_host_forbidden');
        throw err;
      }
      if (socket.destroyed) return;
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      logRequest({ status: 200, code: null, aborted: false }, { requestId, method: 'CONNECT', started, key });
      openTunnel(socket as Socket, head, secureContext, { presented, clientIp, target });
    } catch (err) {
      if (!socket.destroyed) refuse(asTesseraError(err, requestId));
    }
  }

  function openTunnel(socket: Socket, head: Buffer, secureContext: tls.SecureContext, tunnel: Tunnel): void {
    if (head.length > 0) socket.unshift(head);
    const tlsSocket = new tls.TLSSocket(socket, {
      isServer: true,
      secureContext,
      ALPNProtocols: ['http/1.1'],
      // A client that names another host than its CONNECT's gets no certificate at all.
      SNICallback: (servername, done) =>
        servername.toLowerCase().replace(/\.$/, '') === tunnel.target.host
          ? done(null, secureContext)
          : done(new Error('SNI does not name the CONNECT host')),
    });
    const handshake = setTimeout(() => tlsSocket.destroy(), HANDSHAKE_TIMEOUT_MS);
    tlsSocket.once('secure', () => clearTimeout(handshake));
    tlsSocket.on('error', () => tlsSocket.destroy());
    tlsSocket.once('close', () => {
      clearTimeout(handshake);
      socket.destroy();
      openTunnels.delete(tlsSocket);
      if (draining && openTunnels.size === 0) drained?.();
    });
    openTunnels.add(tlsSocket);
    tunnelsBySocket.set(tlsSocket, tunnel);
    tunnels.emit('connection', tlsSocket);
  }

  // ---- The requests in a tunnel -------------------------------------------------------------

  function writeAnswer(res: http.ServerResponse, answer: ForwardRouteAnswer): void {
    if (!Number.isInteger(answer.status) || answer.status < 200 || answer.status > 599) {
      throw new TesseraError('internal_error', { cause: new Error(`proxy returned an unusable status ${answer.status}`) });
    }
    res.sendDate = false;
    res.setHeader('x-tessera-psp-ms', answer.pspMs.toFixed(1));
    for (const { name, value } of answer.headers) {
      const lower = name.toLowerCase();
      if (lower === 'content-length' || lower === 'transfer-encoding' || lower === 'connection' || lower === 'keep-alive') continue;
      if (!isHttpToken(name) || !isHttpFieldValue(value)) continue;
      res.appendHeader(unlikeTesserasHeaderName(name), value);
    }
    res.statusCode = answer.status;
    const body = Buffer.isBuffer(answer.body) ? answer.body : Buffer.from(answer.body ?? []);
    if (answer.status !== 204 && answer.status !== 304) res.setHeader('content-length', body.length);
    res.end(body);
  }

  async function onTunnelRequest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const started = process.hrtime.bigint();
    const requestId = chooseRequestId(req.headers['x-request-id']);
    const tunnel = tunnelsBySocket.get(req.socket);
    let key: ApiKeyRecord | undefined;
    let call: ProxyCallFacts | undefined;
    res.setHeader('x-tessera-request-id', requestId);
    if (draining) res.setHeader('connection', 'close');
    const done = (): void => logRequest(outcomeOf(res), { requestId, method: req.method ?? '', started, key, ...(call ? { call } : {}) });
    res.once('finish', done);
    res.once('close', () => {
      if (!res.writableFinished) done();
    });
    try {
      if (tunnel === undefined) throw new TesseraError('internal_error');
      const authentication = await authenticate(tunnel.presented, tunnel.clientIp, requestId);
      if (authentication.record) key = authentication.record;
      if (!authentication.ok) throw authentication.error;
      const route = await routeOrRefusal(authentication.record, tunnel.target);
      if (!(req.url ?? '').startsWith('/')) {
        throw new TesseraError('invalid_request', { message: 'Requests in the tunnel name a path (origin form): POST /v1/charges.' });
      }
      if (!hostMatchesTarget(req.headers.host, tunnel.target)) {
        throw new TesseraError('invalid_request', { message: 'The Host header names another host than the CONNECT.' });
      }
      const body = await readBoundedBody(req, config.BODY_LIMIT_BYTES);
      const answer = await sendTunnelRequest(deps.useCases, {
        key: authentication.record,
        requestId,
        route,
        method: (req.method ?? '').toUpperCase(),
        url: `https://${tunnel.target.authority}${req.url ?? '/'}`,
        headers: tunnelRequestHeaders(req.rawHeaders),
        body,
        noteCall: (noted) => {
          call = noted;
        },
      });
      writeAnswer(res, answer);
    } catch (err) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const error = asTesseraError(err, requestId);
      // The rest of a refused body is not read: the connection cannot carry another request.
      if (!req.complete) res.setHeader('connection', 'close');
      writeErrorEnvelope(res, error, requestId);
    }
  }

  const tunnels = http.createServer(
    {
      // Node's strict parser, as for /v1: Transfer-Encoding with Content-Length, obs-fold, bare
      // LF and other smuggling shapes are refused with 400 before this code sees a request.
      insecureHTTPParser: false,
      requireHostHeader: true,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      requestTimeout: config.PROXY_TIMEOUT_MS + 30_000,
    },
    (req, res) => void onTunnelRequest(req, res),
  );
  // What Node's parser refused (smuggling shapes, oversized heads) is still answered in the envelope.
  tunnels.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || typeof err.code !== 'string' || !err.code.startsWith('HPE_')) {
      socket.destroy();
      return;
    }
    // No request was made of it, so no time to observe; it is counted all the same.
    observe?.('request', { status: 400, code: 'invalid_request', aborted: false }, undefined);
    socket.end(rawErrorAnswer(new TesseraError('invalid_request', { message: 'The request is not valid HTTP/1.1.' })));
  });

  const server = http.createServer({ insecureHTTPParser: false }, (req, res) => {
    // Not a proxy for plain HTTP: card data must never cross in the clear, so only CONNECT is served.
    res.setHeader('connection', 'close');
    res.setHeader('allow', 'CONNECT');
    writeErrorEnvelope(res, new TesseraError('forward_proxy_connect_only'), chooseRequestId(req.headers['x-request-id']));
  });
  server.on('connect', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void onConnect(req, socket, head));

  return {
    async listen() {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.FORWARD_PROXY_PORT, config.HOST, () => resolve());
      });
      const address = server.address() as AddressInfo;
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      return `http://${host}:${address.port}`;
    },
    listener: {
      drain: () =>
        new Promise<void>((resolve) => {
          draining = true;
          server.close();
          if (openTunnels.size === 0) resolve();
          else drained = resolve;
        }),
      cut: () => {
        for (const socket of openTunnels) socket.destroy();
        server.closeAllConnections();
      },
    },
  };
}

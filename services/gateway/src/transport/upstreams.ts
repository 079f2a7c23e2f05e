import {
  batchItemError,
  call,
  callOnceConnected,
  createBatcher,
  MAX_BATCH_BODY_BYTES,
  type ForwardCall,
  dryRunResponseFromWire,
  forwardRequestToWire,
  readinessOverChannel,
  PROXY_SERVICE_NAME,
  type WireDryRunResponse,
  type WireForwardRequest,
  type ForwardResponse__Output,
  type ProxyClient,
  type ForwardBatchResponse__Output,
  startedCallError,
  whenConnected,
  type VaultClient,
  clientChannelOptions,
  clientCredentials,
  createProxyClient,
  connectVaultClient,
  readTlsMaterial,
  vaultCalls,
  forwardRouteToWire,
  type ForwardRouteCall,
  type ForwardRouteResponse__Output,
  type GetCaCertificateRequest,
  type GetCaCertificateResponse__Output,
  type IssueHostCertificateRequest,
  type IssueHostCertificateResponse__Output,
  tlsChannelOptions,
  webhookDeliveries,
} from '@tessera/protos';
import { grpcClientTuning, tlsFilesOf, TesseraError, type Logger } from '@tessera/common';
import type { GatewayConfig } from '../config';
import type { ForwardProxyVault, ProxyApi, VaultApi, WebhookSender } from '../app/ports';

/**
 * The vault's calls (@tessera/protos vaultCalls) as the gateway's port: every token operation a
 * secret key may ask for. The fields service has its own, narrower port over the same calls.
 */
export function vaultApiFromClient(client: VaultClient, timeoutMs: number): VaultApi {
  return vaultCalls(client, timeoutMs);
}

/**
 * Forward may reach the PSP, so it is started only once the channel to the proxy is ready (else
 * 503, nothing sent), and a failure after it started without the proxy's typed answer is
 * 502 psp_outcome_unknown, an answer the Idempotency-Key keeps so that a retry never charges
 * twice (see callOnceConnected).
 */
/** The most requests in one ForwardBatch call. */
export const MAX_FORWARD_BATCH = 64;

/**
 * /v1/proxy requests that arrive together go to the proxy as one ForwardBatch call, whose answers
 * stream back one by one as each PSP answers (a slow PSP holds up nobody else).
 */
function batchedForward(client: ProxyClient, timeoutMs: number): ProxyApi['forward'] {
  const forward = createBatcher<{ request: ForwardCall; requestId: string }, ForwardResponse__Output>({
    maxBatch: MAX_FORWARD_BATCH,
    maxBatchBytes: MAX_BATCH_BODY_BYTES,
    weigh: ({ request }) =>
      Buffer.byteLength(request.bodyTemplate) +
      Buffer.byteLength(request.url) +
      request.headers.reduce((sum, header) => sum + Buffer.byteLength(header.name ?? '') + Buffer.byteLength(header.value ?? ''), 0),
    sendOne: ({ request, requestId }) =>
      callOnceConnected(client, client.Forward, forwardRequestToWire(request), { timeoutMs, requestId, peer: 'proxy' }),
    sendBatch: async (items, deliver) => {
      const deadline = Date.now() + timeoutMs;
      await whenConnected(client, deadline, 'proxy');
      const answered = new Set<number>();
      await new Promise<void>((resolve, reject) => {
        const call = client.ForwardBatch(
          { items: items.map(({ request, requestId }) => ({ requestId, request: forwardRequestToWire(request) })) },
          { deadline: new Date(deadline) },
        );
        call.on('data', (result: ForwardBatchResponse__Output) => {
          answered.add(result.index);
          deliver(result.index, result.response ?? batchItemError(result));
        });
        call.on('error', reject);
        call.on('end', resolve);
      });
      // A stream that ended without an item's answer says nothing about what its PSP received.
      items.forEach((_, i) => {
        if (!answered.has(i)) deliver(i, new TesseraError('psp_outcome_unknown'));
      });
    },
    // The batch call's own failure leaves every item not yet answered in the same state as a lone call.
    failed: (err) => Promise.reject(startedCallError(err)),
  });
  return (request, ctx) => forward({ request, requestId: ctx.requestId });
}

export function proxyApiFromClient(client: ProxyClient, timeoutMs: number): ProxyApi {
  return {
    forward: batchedForward(client, timeoutMs),
    dryRun: (request, ctx) =>
      call<WireForwardRequest, WireDryRunResponse>(client, client.DryRun, forwardRequestToWire(request), {
        timeoutMs,
        requestId: ctx.requestId,
      }).then(dryRunResponseFromWire),
    // Reaches a PSP, so sorted like Forward: started and unanswered is psp_outcome_unknown.
    forwardRoute: (request, ctx) =>
      callOnceConnected<ReturnType<typeof forwardRouteToWire>, ForwardRouteResponse__Output>(
        client,
        client.ForwardRoute,
        forwardRouteToWire(request satisfies ForwardRouteCall),
        { timeoutMs, requestId: ctx.requestId, peer: 'proxy' },
      ),
    ready: readinessOverChannel(client, PROXY_SERVICE_NAME, 'proxy'),
    close: () => client.close(),
  };
}

/** The vault's forward-proxy calls (IssueHostCertificate, GetCaCertificate) as the gateway's port. */
export function forwardProxyVaultFromClient(client: VaultClient, timeoutMs: number): ForwardProxyVault {
  return {
    async issueHostCertificate(request, ctx) {
      const res = await call<IssueHostCertificateRequest, IssueHostCertificateResponse__Output>(
        client,
        client.IssueHostCertificate,
        request,
        { timeoutMs, requestId: ctx.requestId },
      );
      return { certificateChainPem: res.certificateChainPem, notAfter: new Date(Number(res.notAfterUnix) * 1000) };
    },
    async caCertificatePem(merchantId, ctx) {
      const res = await call<GetCaCertificateRequest, GetCaCertificateResponse__Output>(
        client,
        client.GetCaCertificate,
        { merchantId },
        { timeoutMs, requestId: ctx.requestId },
      );
      return res.certificatePem;
    },
  };
}

/**
 * The vault and proxy clients, over mTLS (npm run certs); plaintext only in development, which the
 * config enforces. Each balances round_robin over every replica its target resolves to that
 * reports SERVING.
 */
export function connectUpstreams(
  config: GatewayConfig,
  logger: Logger,
): { vault: VaultApi; proxy: ProxyApi; webhooks: WebhookSender; forwardProxyVault: ForwardProxyVault } {
  const tlsFiles = tlsFilesOf(config);
  const tls = tlsFiles === undefined ? undefined : readTlsMaterial(tlsFiles);
  if (tls === undefined) logger.warn('TLS is not configured: calls to vault and proxy are PLAINTEXT. Development on loopback only.');
  const keepalive = clientChannelOptions(grpcClientTuning(config));
  const proxyClient = createProxyClient(config.PROXY_ADDR, clientCredentials(tls), {
    ...keepalive,
    ...tlsChannelOptions(tls, config.TLS_PEER_PROXY),
  });
  const vaultClient = connectVaultClient({
    address: config.VAULT_ADDR,
    tls,
    peerName: config.TLS_PEER_VAULT,
    tuning: grpcClientTuning(config),
  });
  return {
    vault: vaultApiFromClient(vaultClient, config.VAULT_TIMEOUT_MS),
    // The same channel as `vault`; closing `vault` closes it.
    forwardProxyVault: forwardProxyVaultFromClient(vaultClient, config.VAULT_TIMEOUT_MS),
    proxy: proxyApiFromClient(proxyClient, config.PROXY_TIMEOUT_MS),
    // Webhook deliveries share the proxy channel; closing `proxy` closes it.
    webhooks: webhookDeliveries(proxyClient),
  };
}

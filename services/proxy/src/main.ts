import * as grpc from '@grpc/grpc-js';
import {
  createLogger,
  createMetricsRegistry,
  grpcClientTuning,
  grpcServerTuning,
  healthServiceOptions,
  limitHeapGrowth,
  loadConfigOrExit,
  rpcObserver,
  startMetricsServer,
  tlsFilesOf,
  onShutdownSignal,
} from '@tessera/common';
import {
  clientChannelOptions,
  clientCredentials,
  createHealthService,
  createVaultClient,
  healthService,
  isLoopbackAddress,
  PROXY_SERVICE_NAME,
  proxyService,
  readTlsMaterial,
  restrictCallers,
  serverCredentials,
  serverOptions,
  shutdownServer,
  tlsChannelOptions,
  type ProxyHandlers,
  type TlsMaterial,
} from '@tessera/protos';
import { configSchema, unsafeProductionCidrs } from './config';
import { createDestinationPolicy } from './domain/destinationPolicy';
import { closePspEgress, createPspEgress } from './egress/pspEgress';
import { createDnsResolver } from './egress/resolver';
import { createProxyHandlers } from './transport/proxyHandlers';
import { callerDeadlineCheck } from './transport/callerDeadline';
import { createVaultPort } from './transport/vaultClient';

/** Longest wait for in-flight PSP calls on shutdown before connections are cut. */
const SHUTDOWN_GRACE_MS = 10_000;

function bindAsync(server: grpc.Server, address: string, tls: TlsMaterial | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(address, serverCredentials(tls), (err, port) => (err ? reject(err) : resolve(port)));
  });
}

async function main(): Promise<void> {
  const config = loadConfigOrExit(configSchema, process.env, 'proxy');
  const logger = createLogger('proxy', config.LOG_LEVEL);
  const tlsFiles = tlsFilesOf(config);
  if (tlsFiles === undefined) {
    if (!isLoopbackAddress(config.PROXY_ADDR)) {
      process.stderr.write(
        '[proxy] PROXY_ADDR is not a loopback address: set TLS_CA_FILE, TLS_CERT_FILE and TLS_KEY_FILE (plaintext gRPC is for loopback only)\n',
      );
      process.exit(78);
    }
    logger.warn(
      'TLS is not configured: gRPC runs in PLAINTEXT without caller authentication. Development on loopback only; set TLS_CA_FILE, TLS_CERT_FILE, TLS_KEY_FILE (npm run certs).',
    );
  }
  const tls = tlsFiles === undefined ? undefined : readTlsMaterial(tlsFiles);
  const vault = createVaultPort(
    config.VAULT_ADDR,
    config.VAULT_TIMEOUT_MS,
    createVaultClient(config.VAULT_ADDR, clientCredentials(tls), {
      ...clientChannelOptions(grpcClientTuning(config)),
      ...tlsChannelOptions(tls, config.TLS_PEER_VAULT),
    }),
  );
  // One policy, asked by the use cases (the URL decision) and by the egress (every address it
  // resolves or connects to); the egress has no rules of its own.
  const destinationPolicy = createDestinationPolicy({ allowedCidrs: config.PSP_ALLOWED_CIDRS, allowedPorts: config.PSP_ALLOWED_PORTS });
  const egress = createPspEgress({
    policy: destinationPolicy,
    connectTimeoutMs: config.PSP_CONNECT_TIMEOUT_MS,
    timeoutMs: config.PSP_TIMEOUT_MS,
    maxResponseBytes: config.PSP_MAX_RESPONSE_BYTES,
    resolve: createDnsResolver({
      timeoutMs: config.PSP_DNS_TIMEOUT_MS,
      tries: config.PSP_DNS_TRIES,
      ...(config.PSP_DNS_SERVERS.length > 0 ? { servers: config.PSP_DNS_SERVERS } : {}),
    }),
  });
  if (config.PSP_ALLOWED_PORTS.length > 0) {
    logger.warn(
      { allowedPorts: config.PSP_ALLOWED_PORTS.map(({ from, to }) => (from === to ? `${from}` : `${from}-${to}`)) },
      'PSP ports besides 443 and 80 allowed',
    );
  }
  if (config.PSP_ALLOWED_CIDRS.length > 0) {
    logger.warn(
      { allowedCidrs: config.PSP_ALLOWED_CIDRS.map(({ address, bits }) => `${address.toString()}/${bits}`) },
      'non-public PSP ranges allowed',
    );
    const unsafe = unsafeProductionCidrs(config.PSP_ALLOWED_CIDRS);
    if (unsafe.length > 0 && config.NODE_ENV === 'production') {
      logger.error(
        { unsafe },
        'PSP_ALLOW_PRIVATE_DESTINATIONS_I_KNOW=true: callers can make the proxy reach loopback, metadata or private hosts (SSRF protection weakened)',
      );
    }
  }

  const server = new grpc.Server(serverOptions(grpcServerTuning(config)));
  // Only the gateway calls the proxy (PCI DSS 7.2: least privilege between services).
  const gatewayOnly = [config.TLS_PEER_GATEWAY];
  const policy: Record<keyof ProxyHandlers & string, string[]> = {
    Forward: gatewayOnly,
    ForwardBatch: gatewayOnly,
    DryRun: gatewayOnly,
    Ready: gatewayOnly,
  };
  const metrics = createMetricsRegistry('proxy');
  server.addService(
    proxyService,
    restrictCallers(
      createProxyHandlers({
        policy: destinationPolicy,
        egress,
        vault,
        logger,
        observe: rpcObserver(metrics),
        checkCallerDeadline: callerDeadlineCheck(config.PSP_CONNECT_TIMEOUT_MS + config.VAULT_TIMEOUT_MS + config.PSP_TIMEOUT_MS, logger),
      }),
      policy,
      tls !== undefined,
    ),
  );
  // grpc.health.v1, for probes (Check) and the gateways' balancing (Watch): SERVING when the vault answers, like Ready.
  const health = createHealthService([PROXY_SERVICE_NAME], async () => (await vault.ready()).ready, healthServiceOptions(config));
  server.addService(healthService, restrictCallers(health.handlers, { Check: gatewayOnly, Watch: gatewayOnly }, tls !== undefined));
  const port = await bindAsync(server, config.PROXY_ADDR, tls);
  // With PROXY_ADDR port 0 the OS picks the port; report the real one for harnesses.
  const address = config.PROXY_ADDR.replace(/:\d+$/, `:${port}`);
  logger.info({ address, tls: tls !== undefined }, 'proxy listening');
  const metricsServer =
    config.METRICS_PORT === undefined ? undefined : await startMetricsServer(metrics, config.METRICS_HOST, config.METRICS_PORT, logger);

  onShutdownSignal((signal) => {
    logger.info({ signal }, 'proxy shutting down');
    // Watchers hear NOT_SERVING and send new calls to the other replicas while these drain.
    health.shutdown();
    void shutdownServer(server, SHUTDOWN_GRACE_MS)
      .then(() => closePspEgress(egress))
      .catch((err: unknown) => logger.warn({ err }, 'closing PSP connections failed'))
      .finally(() => {
        vault.close();
        void metricsServer?.close();
        logger.info('proxy stopped');
        logger.flush();
        process.exit(0);
      });
  });
}

// Every launcher starts a service here, so this is where its heap policy is set (see heapGrowth.ts).
limitHeapGrowth();
main().catch((err: unknown) => {
  process.stderr.write(`[proxy] failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

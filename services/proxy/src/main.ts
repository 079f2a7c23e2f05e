import * as grpc from '@grpc/grpc-js';
import { createLogger, loadConfigOrExit } from '@tessera/common';
import { proxyService, SERVER_OPTIONS } from '@tessera/protos';
import { configSchema } from './config';
import { closePspEgress, createPspEgress } from './egress/pspEgress';
import { createProxyHandlers } from './transport/proxyHandlers';
import { createVaultPort } from './transport/vaultClient';

/** Longest wait for in-flight PSP calls on shutdown before connections are cut. */
const SHUTDOWN_GRACE_MS = 10_000;

function bindAsync(server: grpc.Server, address: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port)));
  });
}

async function main(): Promise<void> {
  const config = loadConfigOrExit(configSchema, process.env, 'proxy');
  const logger = createLogger('proxy', config.LOG_LEVEL);
  const vault = createVaultPort(config.VAULT_ADDR, config.VAULT_TIMEOUT_MS);
  const egress = createPspEgress({
    connectTimeoutMs: config.PSP_CONNECT_TIMEOUT_MS,
    timeoutMs: config.PSP_TIMEOUT_MS,
    maxResponseBytes: config.PSP_MAX_RESPONSE_BYTES,
    allowlist: config.PSP_ALLOWED_CIDRS,
  });
  if (config.PSP_ALLOWED_CIDRS.length > 0) {
    logger.warn(
      { allowedCidrs: config.PSP_ALLOWED_CIDRS.map(({ address, bits }) => `${address.toString()}/${bits}`) },
      'non-public PSP ranges allowed',
    );
  }

  const server = new grpc.Server(SERVER_OPTIONS);
  server.addService(proxyService, createProxyHandlers({ egress, vault, logger }));
  const port = await bindAsync(server, config.PROXY_ADDR);
  // With PROXY_ADDR port 0 the OS picks the port; report the real one for harnesses.
  const address = config.PROXY_ADDR.replace(/:\d+$/, `:${port}`);
  logger.info({ address }, 'proxy listening');

  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'proxy shutting down');
    const force = setTimeout(() => server.forceShutdown(), SHUTDOWN_GRACE_MS);
    force.unref();
    server.tryShutdown(() => {
      clearTimeout(force);
      closePspEgress(egress)
        .catch((err: unknown) => logger.warn({ err }, 'closing PSP connections failed'))
        .finally(() => {
          vault.close();
          logger.info('proxy stopped');
          logger.flush();
          process.exit(0);
        });
    });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`[proxy] failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

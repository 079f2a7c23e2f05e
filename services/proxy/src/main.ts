import { grpcClientTuning, grpcServerTuning, healthServiceOptions, rpcObserver, runService, tlsFilesOf } from '@tessera/common';
import {
  clientChannelOptions,
  clientCredentials,
  createVaultClient,
  grpcListener,
  serverTlsOrExit,
  tlsChannelOptions,
} from '@tessera/protos';
import { configSchema } from './config';
import { createDestinationPolicy } from './domain/destinationPolicy';
import { configuredPspEgress, warnAboutWidenedDestinations } from './egress/configuredEgress';
import { closePspEgress } from './egress/pspEgress';
import { callerDeadlineCheck } from './transport/callerDeadline';
import { createProxyHandlers } from './transport/proxyHandlers';
import { startProxyServer } from './transport/server';
import { createVaultPort } from './transport/vaultClient';

void runService({
  name: 'proxy',
  configSchema,
  async start({ config, logger, metrics }) {
    const tls = serverTlsOrExit(tlsFilesOf(config), { service: 'proxy', variable: 'PROXY_ADDR', address: config.PROXY_ADDR }, logger);
    const vault = createVaultPort(
      config.VAULT_ADDR,
      config.VAULT_TIMEOUT_MS,
      createVaultClient(config.VAULT_ADDR, clientCredentials(tls), {
        ...clientChannelOptions(grpcClientTuning(config)),
        ...tlsChannelOptions(tls, config.TLS_PEER_VAULT),
      }),
    );
    // One policy, asked by the use cases (the URL decision) and by the egress (every address it resolves or connects to).
    const policy = createDestinationPolicy({ allowedCidrs: config.PSP_ALLOWED_CIDRS, allowedPorts: config.PSP_ALLOWED_PORTS });
    const egress = configuredPspEgress(config, policy);
    warnAboutWidenedDestinations(config, logger);

    const handlers = createProxyHandlers({
      policy,
      egress,
      vault,
      logger,
      observe: rpcObserver(metrics),
      maxCompletionResponseBytes: config.MERCHANT_CALL_MAX_RESPONSE_BYTES,
      checkCallerDeadline: callerDeadlineCheck(config.PSP_CONNECT_TIMEOUT_MS + config.VAULT_TIMEOUT_MS + config.PSP_TIMEOUT_MS, logger),
    });
    // SERVING while the vault's own grpc.health.v1 says SERVING.
    const { server, port, health } = await startProxyServer(handlers, async () => (await vault.ready()).ready, {
      address: config.PROXY_ADDR,
      tls,
      gatewayName: config.TLS_PEER_GATEWAY,
      fieldsName: config.TLS_PEER_FIELDS,
      inboundName: config.TLS_PEER_INBOUND,
      tuning: grpcServerTuning(config),
      health: healthServiceOptions(config),
    });
    return {
      listeners: [grpcListener(server, health)],
      // The PSP calls in flight were answered while the server drained; their connections go first.
      clients: [
        { name: 'psp egress', close: () => closePspEgress(egress) },
        { name: 'vault client', close: () => vault.close() },
      ],
      // With PROXY_ADDR port 0 the OS picks the port; report the real one for harnesses.
      listening: { address: config.PROXY_ADDR.replace(/:\d+$/, `:${port}`), tls: tls !== undefined },
    };
  },
});

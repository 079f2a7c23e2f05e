import type { Logger } from '@tessera/common';
import { unsafeProductionCidrs, type ProxyConfig } from '../config';
import type { DestinationPolicy } from '../domain/destinationPolicy';
import { createPspEgress, type PspEgress } from './pspEgress';
import { createDnsResolver } from './resolver';

/**
 * The PSP egress as PSP_* configures it. `policy` is the one the use cases ask too: the egress
 * checks every address it resolves or connects to against it and has no rules of its own.
 */
export function configuredPspEgress(config: ProxyConfig, policy: DestinationPolicy): PspEgress {
  return createPspEgress({
    policy,
    connectTimeoutMs: config.PSP_CONNECT_TIMEOUT_MS,
    timeoutMs: config.PSP_TIMEOUT_MS,
    maxResponseBytes: config.PSP_MAX_RESPONSE_BYTES,
    resolve: createDnsResolver({
      timeoutMs: config.PSP_DNS_TIMEOUT_MS,
      tries: config.PSP_DNS_TRIES,
      ...(config.PSP_DNS_SERVERS.length > 0 ? { servers: config.PSP_DNS_SERVERS } : {}),
    }),
  });
}

/** Says at start-up what the operator let the proxy reach beyond public hosts on 443 and 80 (an SSRF review starts here). */
export function warnAboutWidenedDestinations(config: ProxyConfig, logger: Logger): void {
  if (config.PSP_ALLOWED_PORTS.length > 0) {
    logger.warn(
      { allowedPorts: config.PSP_ALLOWED_PORTS.map(({ from, to }) => (from === to ? `${from}` : `${from}-${to}`)) },
      'PSP ports besides 443 and 80 allowed',
    );
  }
  if (config.PSP_ALLOWED_CIDRS.length === 0) return;
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

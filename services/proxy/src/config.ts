import { Resolver } from 'node:dns/promises';
import { z } from 'zod';
import { checkTlsEnv, env, grpcClientEnvShape, grpcServerEnvShape, grpcTarget, metricsEnvShape, tlsEnvShape } from '@tessera/common';
import { parseCidrList, parsePortList, productionCidrProblem, type Cidr, type PortRange } from './domain/destinationPolicy';

/** A CSV variable read by `parse`, which throws naming the first bad entry (operator config, checked at start). */
function parsedCsv<T>(parse: (entries: string[]) => T) {
  return env.csv().transform((entries, ctx): T => {
    try {
      return parse(entries);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
      return z.NEVER;
    }
  });
}

/**
 * PSP_ALLOWED_CIDRS opens otherwise-forbidden ranges (tests and the local sandbox PSP use
 * 127.0.0.1/32). Empty by default: production reaches only global unicast addresses.
 */
const cidrList = parsedCsv((entries): Cidr[] => parseCidrList(entries));

/** PSP_ALLOWED_PORTS: ports or ranges besides 443 and 80 (`8443,9000-9010`). Empty by default. */
const portList = parsedCsv((entries): PortRange[] => parsePortList(entries));

/**
 * PSP_DNS_SERVERS: name servers for PSP host names (`ip` or `ip:port`, `[ipv6]:port`), as c-ares
 * takes them; empty: those of /etc/resolv.conf. Checked by handing them to a resolver.
 */
const dnsServerList = parsedCsv((entries): string[] => {
  try {
    new Resolver().setServers(entries);
  } catch (err) {
    throw new Error(`not a list of name servers (ip or ip:port): ${(err as Error).message}`);
  }
  return entries;
});

export const configSchema = z
  .object({
    PROXY_ADDR: env.hostPort('127.0.0.1:50052'),
    /** A gRPC target: host:port, dns:///host:port (every vault replica DNS returns) or ipv4:a:p,b:q. */
    VAULT_ADDR: grpcTarget('127.0.0.1:50051'),
    /** Deadline of each vault call (Render, Preview, and the health Check behind the proxy's readiness). */
    VAULT_TIMEOUT_MS: env.positiveInt(2000),
    /** Total time for one PSP exchange, body included. */
    PSP_TIMEOUT_MS: env.positiveInt(30000),
    PSP_CONNECT_TIMEOUT_MS: env.positiveInt(5000),
    // PSP host lookups (c-ares): the first try's wait for an answer, and tries per name server.
    PSP_DNS_TIMEOUT_MS: env.positiveInt(1000),
    PSP_DNS_TRIES: env.positiveInt(2),
    PSP_DNS_SERVERS: dnsServerList,
    PSP_MAX_RESPONSE_BYTES: env.positiveInt(10 * 1024 * 1024),
    // A merchant's completion endpoint (the hosted payment page) answers one line of JSON.
    MERCHANT_CALL_MAX_RESPONSE_BYTES: env.positiveInt(16 * 1024),
    PSP_ALLOWED_CIDRS: cidrList,
    PSP_ALLOWED_PORTS: portList,
    // The operator's explicit word that a production PSP_ALLOWED_CIDRS entry reaching loopback,
    // metadata or a whole private range is meant (see productionCidrProblem); logged at start.
    PSP_ALLOW_PRIVATE_DESTINATIONS_I_KNOW: env.bool(false),
    NODE_ENV: env.nodeEnv(),
    LOG_LEVEL: env.logLevel(),
    ...tlsEnvShape,
    // The fields service's certificate: it may only call merchants' completion endpoints (CallCompletion).
    TLS_PEER_FIELDS: z.string().min(1).default('fields'),
    // The inbound service's certificate (ADR 0013): it may only send inbound routes' requests to
    // merchants' upstreams (ForwardUpstream). No default: unset, nobody may.
    TLS_PEER_INBOUND: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(1).optional()),
    ...metricsEnvShape,
    ...grpcClientEnvShape,
    ...grpcServerEnvShape,
  })
  // Runs even when other variables are bad, so one start-up lists every problem.
  .superRefine(
    (config, ctx) => {
      checkTlsEnv(config, ctx);
      if (config.NODE_ENV !== 'production' || config.PSP_ALLOW_PRIVATE_DESTINATIONS_I_KNOW === true) return;
      // Fields that failed their own check may hold raw input here: look only at parsed lists.
      if (!Array.isArray(config.PSP_ALLOWED_CIDRS)) return;
      for (const problem of unsafeProductionCidrs(config.PSP_ALLOWED_CIDRS)) {
        ctx.addIssue({
          code: 'custom',
          path: ['PSP_ALLOWED_CIDRS'],
          message: `${problem}: refused in production (narrow it to the PSP's own addresses, or set PSP_ALLOW_PRIVATE_DESTINATIONS_I_KNOW=true)`,
        });
      }
    },
    { when: () => true },
  );

/** The PSP_ALLOWED_CIDRS entries production refuses, each with why (empty: none). */
export function unsafeProductionCidrs(cidrs: readonly Cidr[]): string[] {
  return cidrs.map(productionCidrProblem).filter((problem): problem is string => problem !== undefined);
}

export type ProxyConfig = z.infer<typeof configSchema>;

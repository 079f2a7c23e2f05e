import { z } from 'zod';
import { checkTlsEnv, env, grpcClientEnvShape, grpcServerEnvShape, grpcTarget, metricsEnvShape, tlsEnvShape } from '@tessera/common';
import { parseCidrList, type Cidr } from './domain/addressPolicy';
import { parsePortList, type PortRange } from './domain/portPolicy';

/**
 * PSP_ALLOWED_CIDRS opens otherwise-forbidden ranges (tests and the local sandbox PSP use
 * 127.0.0.1/32). Empty by default: production reaches only global unicast addresses.
 */
const cidrList = env.csv().transform((entries, ctx): Cidr[] => {
  try {
    return parseCidrList(entries);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return z.NEVER;
  }
});

/** PSP_ALLOWED_PORTS: ports or ranges besides 443 and 80 (`8443,9000-9010`). Empty by default. */
const portList = env.csv().transform((entries, ctx): PortRange[] => {
  try {
    return parsePortList(entries);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return z.NEVER;
  }
});

export const configSchema = z
  .object({
    PROXY_ADDR: env.hostPort('127.0.0.1:50052'),
    /** A gRPC target: host:port, dns:///host:port (every vault replica DNS returns) or ipv4:a:p,b:q. */
    VAULT_ADDR: grpcTarget('127.0.0.1:50051'),
    /** Deadline of each vault call (Render, Ready). */
    VAULT_TIMEOUT_MS: env.positiveInt(2000),
    /** Total time for one PSP exchange, body included. */
    PSP_TIMEOUT_MS: env.positiveInt(30000),
    PSP_CONNECT_TIMEOUT_MS: env.positiveInt(5000),
    PSP_MAX_RESPONSE_BYTES: env.positiveInt(10 * 1024 * 1024),
    PSP_ALLOWED_CIDRS: cidrList,
    PSP_ALLOWED_PORTS: portList,
    NODE_ENV: env.nodeEnv(),
    LOG_LEVEL: env.logLevel(),
    ...tlsEnvShape,
    ...metricsEnvShape,
    ...grpcClientEnvShape,
    ...grpcServerEnvShape,
  })
  // Runs even when other variables are bad, so one start-up lists every problem.
  .superRefine((config, ctx) => checkTlsEnv(config, ctx), { when: () => true });

export type ProxyConfig = z.infer<typeof configSchema>;

import { z } from 'zod';
import { env } from '@tessera/common';

/** The sandbox PSP's settings: all it reads of its environment (npm start passes it nothing else). */
export const sandboxPspConfigSchema = z
  .object({
    SANDBOX_PSP_PORT: env.port(8090),
    SANDBOX_PSP_HOST: z.string().default('127.0.0.1'),
    // HTTPS beside HTTP, for the forward proxy (docs/proxies.md): a port, and the certificate and key
    // files (ensureSandboxCertificate makes a test pair). Unset: HTTP only.
    SANDBOX_PSP_TLS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
    SANDBOX_PSP_TLS_CERT_FILE: z.string().min(1).optional(),
    SANDBOX_PSP_TLS_KEY_FILE: z.string().min(1).optional(),
    LOG_LEVEL: env.logLevel(),
  })
  .refine(
    (c) => c.SANDBOX_PSP_TLS_PORT === undefined || (c.SANDBOX_PSP_TLS_CERT_FILE !== undefined && c.SANDBOX_PSP_TLS_KEY_FILE !== undefined),
    {
      message: 'SANDBOX_PSP_TLS_PORT needs SANDBOX_PSP_TLS_CERT_FILE and SANDBOX_PSP_TLS_KEY_FILE',
      path: ['SANDBOX_PSP_TLS_PORT'],
    },
  );

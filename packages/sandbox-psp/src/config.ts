import { z } from 'zod';
import { env } from '@tessera/common';

/** The sandbox PSP's settings: all it reads of its environment (npm start passes it nothing else). */
export const sandboxPspConfigSchema = z.object({
  SANDBOX_PSP_PORT: env.port(8090),
  SANDBOX_PSP_HOST: z.string().default('127.0.0.1'),
  LOG_LEVEL: env.logLevel(),
});

import { z } from 'zod';
import { createLogger, env, loadConfigOrExit } from '@tessera/common';
import { createSandboxPsp, listen } from './server';

const config = loadConfigOrExit(
  z.object({ SANDBOX_PSP_PORT: env.port(8090), SANDBOX_PSP_HOST: z.string().default('127.0.0.1'), LOG_LEVEL: env.logLevel() }),
  process.env,
  'sandbox-psp',
);
const logger = createLogger('sandbox-psp', config.LOG_LEVEL);
const server = createSandboxPsp(logger);

listen(server, config.SANDBOX_PSP_PORT, config.SANDBOX_PSP_HOST).then(
  (address) => logger.info({ url: `http://${address.address}:${address.port}/v1/charges` }, 'sandbox psp listening'),
  (err: unknown) => {
    logger.fatal({ err }, 'sandbox psp failed to start');
    process.exit(1);
  },
);
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => server.close(() => process.exit(0)));
}

import { createLogger, loadConfigOrExit } from '@tessera/common';
import { sandboxPspConfigSchema } from './config';
import { createSandboxPsp, listen } from './server';

const config = loadConfigOrExit(sandboxPspConfigSchema, process.env, 'sandbox-psp');
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

import fs from 'node:fs';
import { createLogger, loadConfigOrExit } from '@tessera/common';
import { sandboxPspConfigSchema } from './config';
import { createSandboxPsp, listen } from './server';

const config = loadConfigOrExit(sandboxPspConfigSchema, process.env, 'sandbox-psp');
const logger = createLogger('sandbox-psp', config.LOG_LEVEL);
const servers = [createSandboxPsp(logger)];

async function start(): Promise<void> {
  const address = await listen(servers[0]!, config.SANDBOX_PSP_PORT, config.SANDBOX_PSP_HOST);
  logger.info({ url: `http://${address.address}:${address.port}/v1/charges` }, 'sandbox psp listening');
  if (
    config.SANDBOX_PSP_TLS_PORT === undefined ||
    config.SANDBOX_PSP_TLS_CERT_FILE === undefined ||
    config.SANDBOX_PSP_TLS_KEY_FILE === undefined
  ) {
    return;
  }
  const secure = createSandboxPsp(logger, {
    cert: fs.readFileSync(config.SANDBOX_PSP_TLS_CERT_FILE),
    key: fs.readFileSync(config.SANDBOX_PSP_TLS_KEY_FILE),
  });
  servers.push(secure);
  const tlsAddress = await listen(secure, config.SANDBOX_PSP_TLS_PORT, config.SANDBOX_PSP_HOST);
  logger.info({ url: `https://localhost:${tlsAddress.port}/v1/charges` }, 'sandbox psp listening over https');
}

start().then(
  () => undefined,
  (err: unknown) => {
    logger.fatal({ err }, 'sandbox psp failed to start');
    process.exit(1);
  },
);
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    let open = servers.length;
    for (const server of servers) server.close(() => --open === 0 && process.exit(0));
  });
}

import type { ServiceDefinition } from '@tessera/common';
import { resolveApiKeyPepper } from '@tessera/merchant-data';
import { setUpAdmin } from './adminSetup';
import { startPepperMoves } from './app/pepperMoves';
import { adminConfigSchema } from './config';
import { connectAdminStores } from './store/adminRedis';

/**
 * The admin service: the operators' dashboard and the admin API over Redis. It has no vault or
 * proxy client at all, so it can sit outside the cardholder data environment.
 */
export const adminService: ServiceDefinition<typeof adminConfigSchema> = {
  name: 'admin',
  configSchema: adminConfigSchema,
  async start({ config, logger }) {
    const { pepper, previousPeppers } = resolveApiKeyPepper(config, logger);
    const { stores, clients } = await connectAdminStores(config, logger);
    const listener = await setUpAdmin({ config, logger, stores, pepper, previousPeppers });
    const url = await listener.listen();
    const pepperMoves = startPepperMoves({ keyStore: stores.keyStore, requests: stores.pepperMoves, pepper, logger });
    return {
      listeners: [listener],
      // The moves use Redis: they stop first.
      clients: [pepperMoves, ...clients],
      listening: { url, dashboard: `${url}/dashboard/` },
    };
  },
};

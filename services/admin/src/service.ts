import type { ServiceDefinition } from '@tessera/common';
import { eventFailureCounter } from '@tessera/common';
import { resolveApiKeyPepper, scheduleSweep } from '@tessera/merchant-data';
import { sweepExpiringApiKeys } from './app/apiKeyEvents';
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
  async start({ config, logger, metrics }) {
    const { pepper, previousPeppers } = resolveApiKeyPepper(config, logger);
    const { stores, clients } = await connectAdminStores(config, logger);
    const events = { recorder: stores.events, logger, onFailure: eventFailureCounter(metrics) };
    const listener = await setUpAdmin({ config, logger, stores, pepper, previousPeppers, events });
    const url = await listener.listen();
    const pepperMoves = startPepperMoves({ keyStore: stores.keyStore, requests: stores.pepperMoves, pepper, logger });
    // api_key.expiring_soon: once across replicas per interval, once per key and expiry.
    const sweep = scheduleSweep({
      name: 'api-keys',
      intervalMs: config.EVENT_SWEEP_INTERVAL_SECONDS * 1000,
      lease: stores.sweepLease,
      sweep: async () =>
        void (await sweepExpiringApiKeys({
          ...events,
          keyStore: stores.keyStore,
          days: config.API_KEY_EXPIRING_SOON_DAYS,
          now: () => new Date(),
        })),
      logger,
    });
    return {
      listeners: [listener],
      // The moves and the sweep use Redis: they stop first.
      clients: [{ name: 'event sweep', close: () => sweep.stop() }, pepperMoves, ...clients],
      listening: { url, dashboard: `${url}/dashboard/` },
    };
  },
};

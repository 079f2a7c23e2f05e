import { eventFailureCounter, grpcServerTuning, healthServiceOptions, rpcObserver, runService, tlsFilesOf } from '@tessera/common';
import { grpcListener, serverTlsOrExit } from '@tessera/protos';
import { configSchema } from './config';
import { openCardStore } from './openCardStore';
import { openMerchantData } from './openMerchantData';
import { openServiceKeyRing } from './openKeyRing';
import { createVaultHandlers } from './transport/grpcHandlers';
import { recordAlarmReporter } from './transport/recordAlarms';
import { startVaultServer } from './transport/server';
import { Vault } from './app/vault';
import { MerchantKeyRings } from './app/merchantKeys';
import { runShredOrders } from './app/cryptoShredding';
import { MerchantCas } from './app/merchantCa';
import { scheduleSweep } from '@tessera/merchant-data';
import { sweepExpiredCvvs, sweepExpiringTokens } from './app/eventSweeps';
import { withExpiryIndex } from './store/indexedCardStore';
import { startImportWorker } from './app/imports/imports';
import { runExportOrders } from './app/exports/runExports';
import { startImportCreationWorker } from './app/imports/importCreations';
import { openImportStore } from './openImportStore';

/** How often the vault looks for approved shred orders: an approved shred starts within about this long. */
const SHRED_ORDERS_INTERVAL_MS = 1000;
/** How often the vault looks for approved card exports. */
const EXPORT_ORDERS_INTERVAL_MS = 1000;

void runService({
  name: 'vault',
  configSchema,
  async start({ config, logger, metrics }) {
    const keys = openServiceKeyRing(config, logger);
    logger.info(keys.describe, 'key ring loaded');
    const store = await openCardStore(config, logger);
    const merchantData = await openMerchantData(config, logger);
    const merchantKeys = new MerchantKeyRings({ root: keys.ring, store });
    const vault = new Vault({
      // Every CVV write also keeps the CVV expiry index the cvv.expired_unused sweep reads.
      store: withExpiryIndex(store, merchantData.index, logger),
      keyRing: keys.ring,
      merchantKeys,
      cvvTtlSeconds: config.CVV_TTL_SECONDS,
      cardGraceDays: config.CARD_GRACE_DAYS,
      renderMaxBytes: config.RENDER_MAX_BYTES,
      browserTokenTtlSeconds: config.BROWSER_TOKEN_TTL_SECONDS,
      onAlarm: recordAlarmReporter(logger, metrics),
    });
    const cas = new MerchantCas({
      store: merchantData.cas,
      keyRing: keys.ring,
      routes: merchantData.routes,
      onCreated: (merchantId) => logger.info({ merchantId }, 'forward-proxy CA created'),
    });
    const material = serverTlsOrExit(tlsFilesOf(config), { service: 'vault', variable: 'VAULT_ADDR', address: config.VAULT_ADDR }, logger);
    const tls = material && {
      material,
      gatewayName: config.TLS_PEER_GATEWAY,
      proxyName: config.TLS_PEER_PROXY,
      fieldsName: config.TLS_PEER_FIELDS,
      inboundName: config.TLS_PEER_INBOUND,
    };
    const { server, port, health } = await startVaultServer(
      config.VAULT_ADDR,
      createVaultHandlers(vault, logger, rpcObserver(metrics), {
        cvcSessions: merchantData.sessions,
        fieldsName: config.TLS_PEER_FIELDS,
        cas,
        inboundName: config.TLS_PEER_INBOUND,
      }),
      tls,
      async () => (await vault.ready()).ok,
      { tuning: grpcServerTuning(config), health: healthServiceOptions(config) },
    );
    const sweepDeps = {
      recorder: merchantData.events,
      store,
      index: merchantData.index,
      now: () => new Date(),
      logger,
      onFailure: eventFailureCounter(metrics),
    };
    const sweep = scheduleSweep({
      name: 'vault-expiry',
      intervalMs: config.EVENT_SWEEP_INTERVAL_SECONDS * 1000,
      lease: merchantData.lease,
      sweep: async () => {
        await sweepExpiringTokens({
          ...sweepDeps,
          days: config.TOKEN_EXPIRING_SOON_DAYS,
          passEveryMs: config.TOKEN_EXPIRING_SOON_PASS_SECONDS * 1000,
          // Half the lease (an interval): the pass goes on at the next tick, so two replicas never scan at once.
          budgetMs: config.EVENT_SWEEP_INTERVAL_SECONDS * 500,
        });
        await sweepExpiredCvvs(sweepDeps);
      },
      logger,
    });
    // Approved crypto-shredding orders (docs/adr/0014): looked for every second, by one replica at a time.
    const shredOrders = scheduleSweep({
      name: 'shred-orders',
      intervalMs: SHRED_ORDERS_INTERVAL_MS,
      lease: merchantData.lease,
      sweep: async () => {
        await runShredOrders({
          ...sweepDeps,
          store,
          keks: store,
          rings: merchantKeys,
          cas: merchantData.cas,
          caCache: cas,
          orders: merchantData.shredOrders,
        });
      },
      logger,
    });
    const imports = openImportStore(config);
    const importWorker = startImportWorker({
      store: imports.store,
      keyRing: keys.ring,
      tokenizer: vault,
      batchSize: config.IMPORT_BATCH_SIZE,
      keepMs: config.IMPORT_KEEP_DAYS * 86_400_000,
      pollIntervalMs: config.IMPORT_POLL_INTERVAL_MS,
      leaseMs: config.IMPORT_LEASE_MS,
      now: () => new Date(),
      log: (fields, message) => logger.info(fields, message),
    });
    // Approved card exports (docs/migration.md#leaving-tessera-export): one replica at a time writes each.
    const exportOrders = scheduleSweep({
      name: 'export-orders',
      intervalMs: EXPORT_ORDERS_INTERVAL_MS,
      lease: merchantData.lease,
      sweep: async () => {
        await runExportOrders({
          orders: merchantData.exportOrders,
          recipients: merchantData.exportRecipients,
          files: merchantData.exportFiles,
          cards: vault,
          store,
          fileTtlMs: config.EXPORT_FILE_TTL_SECONDS * 1000,
          now: () => new Date(),
          logger,
        });
      },
      logger,
    });
    // Imports asked for through the admin API wait for a vault to make their key pair.
    const importCreations = startImportCreationWorker({
      store: imports.store,
      creations: imports.creations,
      keyRing: keys.ring,
      leaseMs: config.IMPORT_LEASE_MS,
      keepMs: config.IMPORT_KEEP_DAYS * 86_400_000,
      pollIntervalMs: config.IMPORT_POLL_INTERVAL_MS,
      now: () => new Date(),
      log: (fields, message) => logger.info(fields, message),
    });
    return {
      listeners: [grpcListener(server, health)],
      // The calls in flight finished with the store and the keys; the HSM session goes last.
      clients: [
        { name: 'event sweeps', close: () => sweep.stop() },
        { name: 'shred orders', close: () => shredOrders.stop() },
        { name: 'export orders', close: () => exportOrders.stop() },
        { name: 'card imports', close: () => importWorker.stop() },
        { name: 'card import requests', close: () => importCreations.stop() },
        { name: 'card import store', close: () => imports.close() },
        { name: 'card store', close: () => store.close() },
        { name: 'CVC sessions and events', close: () => merchantData.close() },
        { name: 'key ring', close: () => keys.close() },
      ],
      // With VAULT_ADDR port 0 the OS picks the port; log the one actually bound.
      listening: { address: config.VAULT_ADDR.replace(/:\d+$/, `:${port}`), tls: tls !== undefined },
    };
  },
});

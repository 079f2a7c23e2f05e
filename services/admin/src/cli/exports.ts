#!/usr/bin/env node
/**
 * `npm run exports`: card exports (docs/migration.md#leaving-tessera-export) from the command line:
 * `list`, `show` an order, and `download` a done export's file, OpenPGP ciphertext to the recipient's
 * key, never clear card data. Requesting and approving take two operators with a second factor: the
 * admin API and the dashboard only. Each download is written to the dashboard's audit log.
 * Exit codes: 0 done, 1 failed (unknown order, no file, Redis unreachable), 2 usage, 78 bad configuration.
 */
import fs from 'node:fs';
import { once } from 'node:events';
import { RedisAuditLog, RedisExportFileStore, RedisExportOrderStore, RedisExportRecipientStore } from '@tessera/merchant-data';
import { parseSubcommandLine, reportUsageError, runCliMain, UsageError, withLocalStack, type CliIo } from '@tessera/common';
import { getExportOrder, listExportOrders, openExportFile, type CardExportDeps } from '../app/cardExports';
import type { TwoOperatorCaller } from '../app/twoOperatorOrders';
import { asCommand, cliCaller, runWithCliRedis } from './cliCommand';
import { connectCliRedis } from './cliRedis';

const USAGE = `Usage: npm run exports -- <command> [options]

Commands:
  list [--json]
      Card export orders, newest first (at most 100).
  show <exp_…> [--json]
      One order: its state, counts, recipient fingerprint and when its file expires.
  download <exp_…> --out <file>
      Writes a done export's file (OpenPGP ciphertext to the recipient's key) to <file>, chunk by chunk.

Request and approve exports in the admin API (two platform operators with a second factor):
POST /admin/v1/merchants/{id}/export-requests, POST /admin/v1/export-orders/{id}/approve.
Environment: as for npm run keys (REDIS_URL; beside npm start none).`;

const OPTIONS = {
  out: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/**
 * The CLI runs with the deployment's Redis credentials, which read the ciphertext anyway: they stand
 * in for the second factor here. It never requests or approves an export.
 */
function cliOperator(): TwoOperatorCaller {
  return { ...cliCaller(), mfaEnabled: true };
}

export async function runExportsCli(argv: string[], environment: NodeJS.ProcessEnv, io: CliIo): Promise<number> {
  const parsed = parseSubcommandLine(argv, OPTIONS, USAGE, io, ['list', 'show', 'download']);
  if (!parsed.ok) return parsed.exitCode;
  const { args } = parsed;
  const command = args.positionals[0] as 'list' | 'show' | 'download';
  const orderId = args.positionals[1] ?? '';
  try {
    if (command !== 'list' && orderId === '') throw new UsageError(`${command} needs an export order id (exp_…)`);
    if (command === 'download' && args.values.out === undefined) throw new UsageError('download needs --out <file>');
  } catch (err) {
    return reportUsageError(err, USAGE, io);
  }
  return runWithCliRedis(
    environment,
    io,
    "Exports live in the gateway's Redis: point REDIS_URL at the same value the admin service uses.",
    async ({ config, redis }) => {
      await connectCliRedis(redis);
      const deps: CardExportDeps = {
        orders: new RedisExportOrderStore(redis),
        recipients: new RedisExportRecipientStore(redis),
        files: new RedisExportFileStore(redis),
        audit: new RedisAuditLog(redis, config.ADMIN_AUDIT_MAX_ENTRIES),
        maxPerMerchantPerDay: config.EXPORT_MAX_PER_MERCHANT_PER_DAY,
        now: () => new Date(),
      };
      if (command === 'list') {
        const orders = await asCommand(() => listExportOrders(deps, cliOperator()));
        if (args.values.json) io.out(JSON.stringify(orders));
        else
          for (const o of orders)
            io.out(
              `${o.id}  ${o.merchantId} ${o.mode} ${o.format}  ${o.status}${o.exported === undefined ? '' : ` ${o.exported} card(s)`}  to ${o.recipient.fingerprint}`,
            );
        return;
      }
      if (command === 'show') {
        const order = await asCommand(() => getExportOrder(deps, cliOperator(), orderId), orderId);
        io.out(args.values.json ? JSON.stringify(order) : JSON.stringify(order, null, 2));
        return;
      }
      const { order, chunks } = await asCommand(() => openExportFile(deps, cliOperator(), orderId), orderId);
      const out = fs.createWriteStream(args.values.out as string, { mode: 0o600 });
      for await (const chunk of chunks) if (!out.write(chunk)) await once(out, 'drain');
      out.end();
      await once(out, 'finish');
      io.out(`Wrote ${order.bytes ?? 0} bytes of ${order.id} (OpenPGP, to ${order.recipient.fingerprint}) to ${args.values.out}.`);
    },
  );
}

// Beside npm start, with no Redis named: the stack it runs (.tessera/admin/stack.json).
if (require.main === module) runCliMain(runExportsCli, withLocalStack('admin', process.env));

import { Counter, type Registry } from 'prom-client';
import type { Logger } from '@tessera/common';
import type { RecordAlarm } from '../app/vault';

const MESSAGES: Record<RecordAlarm['alarm'], string> = {
  authentication_failed: 'a stored record failed authentication: possible tampering in the card store; answered as a missing token',
  cvv_replayed: 'a CVV that was already used is back in the card store: possible restore from a copy; refused',
  cvv_expired: 'a CVV past its sealed deadline is in the card store: possible restore from a copy; refused',
};

/**
 * Every alarm is one warn line with the token (never card data) and one count in
 * tessera_vault_record_alarms_total{alarm,record}: both closed sets, so no free text in a label.
 */
export function recordAlarmReporter(logger: Logger, registry?: Registry): (alarm: RecordAlarm) => void {
  const alarms =
    registry === undefined
      ? undefined
      : new Counter({
          name: 'tessera_vault_record_alarms_total',
          help: 'Card and CVV records refused as tampered with (authentication_failed) or restored (cvv_replayed, cvv_expired)',
          labelNames: ['alarm', 'record'],
          registers: [registry],
        });
  return ({ alarm, record, token }) => {
    alarms?.inc({ alarm, record });
    logger.warn({ alarm, record, token }, MESSAGES[alarm]);
  };
}

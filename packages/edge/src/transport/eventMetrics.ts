import { Counter, type Registry } from 'prom-client';
import { EVENT_TYPES, type EventType } from '@tessera/merchant-data';

/**
 * tessera_events_record_failures_total{type}: events a service could not record (Redis down, or an
 * object refused by its schema). The action they describe happened all the same; an alert on
 * this rate is how an operator learns merchants missed events. The type only, never an object.
 */
export function eventFailureCounter(registry: Registry): (type: EventType) => void {
  const failures = new Counter({
    name: 'tessera_events_record_failures_total',
    help: 'Events that could not be recorded (the action itself succeeded), by event type',
    labelNames: ['type'],
    registers: [registry],
  });
  return (type) => failures.inc({ type: EVENT_TYPES.includes(type) ? type : 'unknown' });
}

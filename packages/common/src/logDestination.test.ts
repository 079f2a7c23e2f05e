import pino from 'pino';
import { turnBatchedDestination } from './logDestination';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function recordingTarget() {
  const writes: string[] = [];
  return { writes, target: { write: (text: string) => void writes.push(text) } };
}

describe('turnBatchedDestination', () => {
  it('writes the lines of one event-loop turn in one write, in order, at the end of the turn', async () => {
    const { writes, target } = recordingTarget();
    const log = pino({ base: null, timestamp: false }, turnBatchedDestination(target));
    log.info('first');
    log.info('second');
    expect(writes).toEqual([]);
    await nextTurn();
    expect(writes).toHaveLength(1);
    expect(
      (writes[0] ?? '')
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { msg: string }).msg),
    ).toEqual(['first', 'second']);
  });

  it('writes a line logged alone in its own turn without waiting for more', async () => {
    const { writes, target } = recordingTarget();
    const log = pino({ base: null, timestamp: false }, turnBatchedDestination(target));
    log.info('one');
    await nextTurn();
    log.info('two');
    await nextTurn();
    expect(writes.map((w) => (JSON.parse(w) as { msg: string }).msg)).toEqual(['one', 'two']);
  });

  it('writes what is pending at once on flushSync, as on process exit', () => {
    const { writes, target } = recordingTarget();
    const destination = turnBatchedDestination(target);
    const log = pino({ base: null, timestamp: false }, destination);
    log.error('fatal');
    destination.flushSync();
    expect(writes).toHaveLength(1);
    destination.flushSync();
    expect(writes).toHaveLength(1);
  });

  it('writes what is pending and then calls back on logger.flush(cb)', async () => {
    const { writes, target } = recordingTarget();
    const log = pino({ base: null, timestamp: false }, turnBatchedDestination(target));
    log.info('before shutdown');
    await new Promise<void>((resolve) => log.flush(() => resolve()));
    expect(writes).toHaveLength(1);
  });
});

import { Writable } from 'node:stream';
import pino from 'pino';
import { REDACT_PATHS } from '@tessera/common';
import { exchangeLogger } from './forward';

function capture(): { lines: string[]; logger: pino.Logger } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const logger = pino({ base: { service: 'proxy' }, redact: { paths: REDACT_PATHS, censor: '[REDACTED]' } }, stream);
  return { lines, logger };
}

describe('exchangeLogger', () => {
  it('still redacts the sensitive names at the top level, and keeps the bindings and level', () => {
    const { lines, logger } = capture();
    const log = exchangeLogger(logger);
    log.info({ requestId: 'req_1', pan: '4242424242424242', body: '{"n":"4242424242424242"}', status: 200 }, 'psp exchange');
    log.debug({ requestId: 'req_2' }, 'below the level');
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
    expect(line).toMatchObject({ service: 'proxy', requestId: 'req_1', pan: '[REDACTED]', body: '[REDACTED]', status: 200 });
    expect(lines[0]).not.toContain('4242424242424242');
  });

  it('is made once per logger', () => {
    const { logger } = capture();
    expect(exchangeLogger(logger)).toBe(exchangeLogger(logger));
  });
});

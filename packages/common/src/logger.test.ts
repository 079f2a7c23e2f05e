import { Writable } from 'node:stream';
import pino from 'pino';
import { maskDigitRuns, REDACT_PATHS } from './logger';

function capture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, stream };
}

describe('logger redaction', () => {
  it('removes card and key fields at the top level and one level down', () => {
    const { lines, stream } = capture();
    const log = pino({ redact: { paths: REDACT_PATHS, censor: '[REDACTED]' } }, stream);
    log.info({ number: '4242424242424242', cvv: '123', card: { number: '5555555555554444', cvv: '999' }, apiKey: 'tsk_test_secret' }, 'hi');
    const text = lines.join('');
    expect(text).not.toContain('4242424242424242');
    expect(text).not.toContain('5555555555554444');
    expect(text).not.toContain('tsk_test_secret');
    expect(text).not.toMatch(/"cvv":"\d+"/);
    expect(text).toContain('[REDACTED]');
  });
});

describe('maskDigitRuns', () => {
  it('masks anything shaped like a card number in free text', () => {
    expect(maskDigitRuns('bad card 4242 4242 4242 4242 here')).toBe('bad card [REDACTED_NUMBER] here');
    expect(maskDigitRuns('pan=378282246310005')).toBe('pan=[REDACTED_NUMBER]');
  });

  it('leaves short numbers such as ports and statuses alone', () => {
    expect(maskDigitRuns('listening on 127.0.0.1:8080 status 402')).toBe('listening on 127.0.0.1:8080 status 402');
  });
});

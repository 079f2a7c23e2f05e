import { Writable } from 'node:stream';
import pino from 'pino';
import { createLogger, LOG_REDACTION } from './logger';

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
    const log = pino(LOG_REDACTION, stream);
    log.info({ number: '4242424242424242', cvv: '123', card: { number: '5555555555554444', cvv: '999' }, apiKey: 'tsk_test_secret' }, 'hi');
    const text = lines.join('');
    expect(text).not.toContain('4242424242424242');
    expect(text).not.toContain('5555555555554444');
    expect(text).not.toContain('tsk_test_secret');
    expect(text).not.toMatch(/"cvv":"\d+"/);
    expect(text).toContain('[REDACTED]');
  });

  it('removes Redis passwords and URLs that may carry one', () => {
    const { lines, stream } = capture();
    const log = pino(LOG_REDACTION, stream);
    const url = 'rediss://tessera-vault:s3cret-redis-pw@redis:6379';
    log.info({ REDIS_URL: url, redisUrl: url, redis: { password: 's3cret-redis-pw' } }, 'config');
    expect(lines.join('')).not.toContain('s3cret-redis-pw');
  });

  it('redacts request header maps and child bindings, and leaves the caller’s objects as they were', () => {
    const { lines, stream } = capture();
    const log = pino(LOG_REDACTION, stream).child({ apiKey: 'tsk_test_bound', merchantId: 'm1' });
    const fields = { req: { headers: { authorization: 'Bearer sk_live_x', host: 'psp.example' }, body: '4242424242424242' }, status: 200 };
    log.info(fields, 'request');
    const line = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
    expect(line).toMatchObject({
      apiKey: '[REDACTED]',
      merchantId: 'm1',
      req: { headers: { authorization: '[REDACTED]', host: 'psp.example' }, body: '[REDACTED]' },
      status: 200,
    });
    expect(fields.req.headers.authorization).toBe('Bearer sk_live_x');
    expect(fields.req.body).toBe('4242424242424242');
  });

  it('keeps card data of an error out of the line, whether under err or another name', () => {
    const { lines, stream } = capture();
    const log = createLogger('test', 'info', stream);
    const withBody = () => Object.assign(new Error('parse failed for 4242424242424242'), { body: '{"number":"4242424242424242"}' });
    log.error({ err: withBody(), failure: withBody() }, 'failed');
    expect(lines.join('')).not.toContain('4242424242424242');
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ err: { type: 'Error', message: 'parse failed for [redacted]' } });
  });
});

describe('card numbers in any logged string', () => {
  it('are masked in every string field, top level and one level down, whatever its name', () => {
    const { lines, stream } = capture();
    const log = createLogger('test', 'info', stream);
    log.warn(
      {
        requestId: '4242_4242_4242_4242',
        pspHost: '4242424242424242.example:443',
        item: { header: '3782-822463-10005', note: 'ok' },
        port: 8080,
        clientIp: '192.168.100.200',
      },
      'psp exchange failed',
    );
    const text = lines.join('');
    expect(JSON.parse(text)).toMatchObject({
      requestId: '[redacted]',
      pspHost: '[redacted].example:443',
      item: { header: '[redacted]', note: 'ok' },
      port: 8080,
      clientIp: '192.168.100.200',
    });
  });

  it('leaves ports, statuses and addresses alone', () => {
    const { lines, stream } = capture();
    createLogger('test', 'info', stream).info({ address: '127.0.0.1:8080', status: '402', at: '2026-11-23' }, 'listening');
    expect(JSON.parse(lines.join(''))).toMatchObject({ address: '127.0.0.1:8080', status: '402', at: '2026-11-23' });
  });
});

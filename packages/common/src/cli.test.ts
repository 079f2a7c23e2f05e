import { ConfigError } from './config';
import { EXIT_CONFIG, EXIT_USAGE, parseCliConfig, reportUsageError, UsageError } from './cli';

const captureIo = () => {
  const err: string[] = [];
  return { err, io: { out: () => undefined, err: (line: string) => err.push(line) } };
};

describe('CLI plumbing', () => {
  it('reports a usage error with the usage text and exit code 2', () => {
    const { err, io } = captureIo();
    expect(reportUsageError(new UsageError('--merchant is required'), 'Usage: keys ...', io)).toBe(EXIT_USAGE);
    expect(err.join('\n')).toBe('--merchant is required\n\nUsage: keys ...');
  });

  it('rethrows anything that is not a usage error', () => {
    const boom = new Error('boom');
    expect(() => reportUsageError(boom, 'usage', captureIo().io)).toThrow(boom);
  });

  it('prints every configuration problem and returns exit code 78 instead of throwing', () => {
    const { err, io } = captureIo();
    const result = parseCliConfig(() => {
      throw new ConfigError(['REDIS_URL: must be a redis:// URL', 'API_KEY_PEPPER: too short']);
    }, io);
    expect(result).toEqual({ ok: false, exitCode: EXIT_CONFIG });
    expect(err.join('\n')).toContain('REDIS_URL: must be a redis:// URL');
    expect(err.join('\n')).toContain('API_KEY_PEPPER: too short');
  });

  it('returns the parsed configuration when it is valid', () => {
    expect(parseCliConfig(() => ({ port: 8080 }), captureIo().io)).toEqual({ ok: true, config: { port: 8080 } });
  });
});

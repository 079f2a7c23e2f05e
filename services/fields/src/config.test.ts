import { ConfigError } from '@tessera/common';
import { fieldsOriginOf, parseFieldsConfig as parseEnv } from './config';

/** Development defaults unless a test sets NODE_ENV; REDIS_URL is given unless a test unsets it (parsing never connects). */
const parseFieldsConfig: typeof parseEnv = (env) => parseEnv({ NODE_ENV: 'development', REDIS_URL: 'redis://127.0.0.1:7000', ...env });

function problems(env: NodeJS.ProcessEnv): string[] {
  try {
    parseFieldsConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('fields config', () => {
  it('listens on 127.0.0.1:8082 and is its own origin there outside production', () => {
    const config = parseFieldsConfig({});
    expect(config).toMatchObject({ FIELDS_PORT: 8082, FIELDS_BIND: '127.0.0.1', VAULT_ADDR: '127.0.0.1:50051' });
    expect(config.FIELDS_ORIGIN).toBeUndefined();
    expect(fieldsOriginOf(config, 8082)).toBe('http://127.0.0.1:8082');
    expect(fieldsOriginOf(parseFieldsConfig({ FIELDS_ORIGIN: 'https://fields.tessera.example/' }), 8082)).toBe(
      'https://fields.tessera.example',
    );
  });

  it('needs Redis, a bare https FIELDS_ORIGIN in production, and one pepper setting, not both', () => {
    expect(problems({ REDIS_URL: undefined })).toEqual([expect.stringMatching(/^REDIS_URL: is required/)]);
    expect(problems({ FIELDS_ORIGIN: 'https://fields.example/path' })).toEqual([
      expect.stringMatching(/^FIELDS_ORIGIN: must be an origin/),
    ]);
    const production = problems({ NODE_ENV: 'production' });
    expect(production).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^FIELDS_ORIGIN: is required in production/),
        expect.stringMatching(/^API_KEY_PEPPER: is required/),
      ]),
    );
    expect(problems({ NODE_ENV: 'production', FIELDS_ORIGIN: 'http://fields.example' })).toEqual(
      expect.arrayContaining([expect.stringMatching(/^FIELDS_ORIGIN: must be https/)]),
    );
    expect(problems({ API_KEY_PEPPER: 'p'.repeat(32), API_KEY_PEPPERS: `v1:${'q'.repeat(32)}` })).toEqual([
      expect.stringMatching(/^API_KEY_PEPPERS: set API_KEY_PEPPER or API_KEY_PEPPERS, not both/),
    ]);
  });

  it('keeps the challenge base at or below its ceiling', () => {
    expect(parseFieldsConfig({ BROWSER_CHALLENGE_BASE_NUMBER: '500000', BROWSER_CHALLENGE_MAX_NUMBER: '500000' })).toMatchObject({
      BROWSER_CHALLENGE_BASE_NUMBER: 500_000,
    });
    expect(problems({ BROWSER_CHALLENGE_BASE_NUMBER: '600000', BROWSER_CHALLENGE_MAX_NUMBER: '500000' }).join('\n')).toMatch(
      /BROWSER_CHALLENGE_BASE_NUMBER.*must not exceed BROWSER_CHALLENGE_MAX_NUMBER/,
    );
  });

  it('reaches the proxy only when told where it is (hosted pages with a completion URL need it)', () => {
    expect(parseFieldsConfig({}).PROXY_ADDR).toBeUndefined();
    expect(parseFieldsConfig({ PROXY_ADDR: '' }).PROXY_ADDR).toBeUndefined();
    expect(parseFieldsConfig({ PROXY_ADDR: 'ipv4:127.0.0.1:1,127.0.0.1:2' }).PROXY_ADDR).toBe('ipv4:127.0.0.1:1,127.0.0.1:2');
    expect(() => parseFieldsConfig({ PROXY_ADDR: 'ipv4:proxy' })).toThrow(/PROXY_ADDR/);
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { ConfigError, parseConfig } from './config';
import { checkRedisTlsEnv, redisConnectionOptions, redisTlsCaFileEnv } from './redisConnection';

const schema = z
  .object({ REDIS_URL: z.string().optional(), REDIS_TLS_CA_FILE: redisTlsCaFileEnv })
  .superRefine((cfg, ctx) => checkRedisTlsEnv(cfg, ctx));

function problems(env: NodeJS.ProcessEnv): string[] {
  try {
    parseConfig(schema, env);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-redis-ca-'));
const caFile = path.join(dir, 'ca.crt');
fs.writeFileSync(caFile, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('REDIS_TLS_CA_FILE', () => {
  it('is accepted with a rediss:// URL and a readable PEM certificate, and optional', () => {
    expect(problems({ REDIS_URL: 'rediss://u:p@redis:6379', REDIS_TLS_CA_FILE: caFile })).toEqual([]);
    expect(problems({ REDIS_URL: 'rediss://redis:6379', REDIS_TLS_CA_FILE: '' })).toEqual([]);
  });

  it('is refused with a plaintext URL, an unreadable file, or a file without a certificate', () => {
    expect(problems({ REDIS_URL: 'redis://redis:6379', REDIS_TLS_CA_FILE: caFile })).toEqual([
      'REDIS_TLS_CA_FILE: needs a rediss:// REDIS_URL (TLS to Redis is chosen by the URL)',
    ]);
    expect(problems({ REDIS_URL: 'rediss://redis:6379', REDIS_TLS_CA_FILE: path.join(dir, 'missing.crt') })).toEqual([
      `REDIS_TLS_CA_FILE: cannot read ${path.join(dir, 'missing.crt')}: ENOENT`,
    ]);
    const notPem = path.join(dir, 'key.txt');
    fs.writeFileSync(notPem, 'not a certificate');
    expect(problems({ REDIS_URL: 'rediss://redis:6379', REDIS_TLS_CA_FILE: notPem })).toEqual([
      `REDIS_TLS_CA_FILE: ${notPem} holds no PEM certificate`,
    ]);
  });
});

describe('redisConnectionOptions', () => {
  it('takes the user and the URL-encoded password from the URL, and TLS with the CA from rediss://', () => {
    expect(redisConnectionOptions('rediss://tessera-vault:p%40ss%2Fw@redis:6379', caFile)).toEqual({
      username: 'tessera-vault',
      password: 'p@ss/w',
      tls: { ca: fs.readFileSync(caFile) },
    });
    expect(redisConnectionOptions('rediss://redis:6379', undefined)).toEqual({ tls: {} });
    expect(redisConnectionOptions('redis://:only-password@redis:6379', undefined)).toEqual({ password: 'only-password' });
    expect(redisConnectionOptions(undefined, undefined)).toEqual({});
  });
});

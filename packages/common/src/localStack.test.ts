import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readLocalStackFile, withLocalStack, writeLocalStackFile } from './localStack';

const gatewayUrl = 'redis://tessera-gateway:secret@127.0.0.1:41234';
let cwd: string;

beforeEach(() => {
  cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-local-stack-'));
});
afterEach(() => fs.rmSync(cwd, { recursive: true, force: true }));

/** What npm start writes into .tessera of where it runs. */
function npmStartWrote(): void {
  writeLocalStackFile(path.join(cwd, '.tessera'), {
    redis: { port: 41234 },
    environments: {
      gateway: { NODE_ENV: 'development', REDIS_URL: gatewayUrl, TESSERA_STATE_DIR: '/repo/.tessera/gateway' },
      vault: { NODE_ENV: 'development', REDIS_URL: 'redis://tessera-vault:other@127.0.0.1:41234' },
    },
  });
}

describe('withLocalStack (the CLIs beside npm start)', () => {
  it("gives a CLI with no Redis of its own the running stack's settings for its service, its own variables winning", () => {
    npmStartWrote();
    expect(withLocalStack('gateway', { PATH: '/usr/bin', LOG_LEVEL: 'debug', NODE_ENV: 'test' }, cwd)).toEqual({
      PATH: '/usr/bin',
      LOG_LEVEL: 'debug',
      NODE_ENV: 'test',
      REDIS_URL: gatewayUrl,
      TESSERA_STATE_DIR: '/repo/.tessera/gateway',
    });
    expect(withLocalStack('vault', {}, cwd).REDIS_URL).toBe('redis://tessera-vault:other@127.0.0.1:41234');
  });

  it('leaves an environment that names a Redis as it is: nothing of the development stack mixes into it', () => {
    npmStartWrote();
    for (const env of [{ REDIS_URL: 'redis://prod:6379' }, { REDIS_CLUSTER_NODES: 'a:1,b:2' }]) {
      expect(withLocalStack('gateway', env, cwd)).toBe(env);
    }
  });

  it('leaves the environment as it is where npm start has not run, or left no readable file', () => {
    const env = { PATH: '/usr/bin' };
    expect(withLocalStack('gateway', env, cwd)).toBe(env);
    fs.mkdirSync(path.join(cwd, '.tessera'));
    fs.writeFileSync(path.join(cwd, '.tessera', 'stack.json'), '{ not json');
    expect(withLocalStack('gateway', env, cwd)).toBe(env);
    expect(readLocalStackFile(path.join(cwd, '.tessera'))).toBeUndefined();
  });

  it('keeps the file (it holds Redis passwords) readable by its owner only', () => {
    npmStartWrote();
    expect(fs.statSync(path.join(cwd, '.tessera', 'stack.json')).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(cwd, '.tessera')).mode & 0o777).toBe(0o700);
    expect(readLocalStackFile(path.join(cwd, '.tessera'))?.redis).toEqual({ port: 41234 });
  });
});

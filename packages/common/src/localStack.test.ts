import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readLocalStackFile, withLocalStack, writeLocalStackFile } from './localStack';

const gatewayUrl = 'redis://tessera-gateway:secret@127.0.0.1:41234';
const vaultUrl = 'redis://tessera-vault:other@127.0.0.1:41234';
let cwd: string;
const stateDirOf = (service: string) => path.join(cwd, '.tessera', service);

beforeEach(() => {
  cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-local-stack-'));
});
afterEach(() => fs.rmSync(cwd, { recursive: true, force: true }));

/** What npm start writes into each service's own directory, from the environment it gave that service. */
function npmStartWrote(): void {
  writeLocalStackFile(stateDirOf('gateway'), {
    NODE_ENV: 'development',
    REDIS_URL: gatewayUrl,
    TESSERA_STATE_DIR: stateDirOf('gateway'),
    API_KEY_PEPPER: 'the-pepper',
    TESSERA_DEV_API_KEY: 'sk_test_dev',
    TESSERA_DEV_ADMIN_PASSWORD: 'admin-password',
  });
  writeLocalStackFile(stateDirOf('vault'), {
    NODE_ENV: 'development',
    REDIS_URL: vaultUrl,
    TESSERA_STATE_DIR: stateDirOf('vault'),
    VAULT_KEYS: 'k1:the-key',
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
      TESSERA_STATE_DIR: stateDirOf('gateway'),
    });
    expect(withLocalStack('vault', {}, cwd)).toEqual({
      NODE_ENV: 'development',
      REDIS_URL: vaultUrl,
      TESSERA_STATE_DIR: stateDirOf('vault'),
    });
  });

  it("keeps each service's file in its own state directory with only its Redis, NODE_ENV and state directory: no other secret", () => {
    npmStartWrote();
    expect(fs.readdirSync(path.join(cwd, '.tessera')).sort()).toEqual(['gateway', 'vault']);
    const gatewayFile = fs.readFileSync(path.join(stateDirOf('gateway'), 'stack.json'), 'utf8');
    const vaultFile = fs.readFileSync(path.join(stateDirOf('vault'), 'stack.json'), 'utf8');
    for (const secret of ['the-pepper', 'sk_test_dev', 'admin-password', 'the-key', vaultUrl]) expect(gatewayFile).not.toContain(secret);
    for (const secret of ['the-pepper', 'sk_test_dev', 'admin-password', 'the-key', gatewayUrl]) expect(vaultFile).not.toContain(secret);
  });

  it('reads the file of the state directory the CLI is told of', () => {
    npmStartWrote();
    const elsewhere = path.join(cwd, 'elsewhere');
    writeLocalStackFile(elsewhere, { REDIS_URL: 'redis://tessera-gateway:moved@127.0.0.1:41235' });
    expect(withLocalStack('gateway', { TESSERA_STATE_DIR: 'elsewhere' }, cwd)).toEqual({
      TESSERA_STATE_DIR: 'elsewhere',
      REDIS_URL: 'redis://tessera-gateway:moved@127.0.0.1:41235',
    });
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
    fs.mkdirSync(stateDirOf('gateway'), { recursive: true });
    fs.writeFileSync(path.join(stateDirOf('gateway'), 'stack.json'), '{ not json');
    expect(withLocalStack('gateway', env, cwd)).toBe(env);
    expect(readLocalStackFile(stateDirOf('gateway'))).toBeUndefined();
  });

  it('keeps the file (it holds a Redis password) readable by its owner only', () => {
    npmStartWrote();
    expect(fs.statSync(path.join(stateDirOf('vault'), 'stack.json')).mode & 0o777).toBe(0o600);
    expect(fs.statSync(stateDirOf('vault')).mode & 0o777).toBe(0o700);
  });
});

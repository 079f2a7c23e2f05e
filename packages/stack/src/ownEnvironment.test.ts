import { ownEnvironment } from './ownEnvironment';

const parent: NodeJS.ProcessEnv = {
  PATH: '/usr/bin',
  HOME: '/home/dev',
  REDIS_URL: 'redis://tessera-vault:secret@127.0.0.1:6379',
  VAULT_KEYS: 'k1:AAAA',
  API_KEY_PEPPER: 'p'.repeat(32),
  TESSERA_STATE_DIR: '/repo/.tessera',
  PSP_TIMEOUT_MS: '5000',
  LOG_LEVEL: 'debug',
};

describe('ownEnvironment', () => {
  it("passes only the basics and the variables the process's configuration reads, nobody else's secrets", () => {
    expect(ownEnvironment(parent, ['PSP_TIMEOUT_MS', 'LOG_LEVEL', 'PSP_ALLOWED_CIDRS'])).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/dev',
      PSP_TIMEOUT_MS: '5000',
      LOG_LEVEL: 'debug',
    });
  });

  it('gives a process the secrets it reads itself', () => {
    expect(ownEnvironment(parent, ['REDIS_URL', 'VAULT_KEYS'])).toMatchObject({
      REDIS_URL: parent.REDIS_URL,
      VAULT_KEYS: parent.VAULT_KEYS,
    });
  });

  it("sets the process's own values over the parent's, and removes those given as undefined", () => {
    const env = ownEnvironment(parent, ['TESSERA_STATE_DIR', 'LOG_LEVEL'], {
      TESSERA_STATE_DIR: '/repo/.tessera/vault',
      LOG_LEVEL: undefined,
      NODE_ENV: 'development',
    });
    expect(env).toEqual({ PATH: '/usr/bin', HOME: '/home/dev', TESSERA_STATE_DIR: '/repo/.tessera/vault', NODE_ENV: 'development' });
  });
});

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as pkcs11js from 'pkcs11js';

/** Debian's softhsm2 package puts the PKCS#11 module here (scripts/test-tools.mjs installs it). */
export const SOFTHSM_MODULE = '/usr/lib/softhsm/libsofthsm2.so';

export interface SoftHsmToken {
  /** SOFTHSM2_CONF for every process that opens this token (the vault, its CLI, this test). */
  conf: string;
  label: string;
  pin: string;
  /** Environment that points the vault at this token, without the key list. */
  vaultEnv(): Record<string, string>;
  /** Generates an AES-256 KEK inside the token, as an HSM administrator would. */
  createKek(label: string, options?: { extractable?: boolean }): void;
  /** Runs `fn` with a logged-in session of the test's own (the vault never shares it). */
  withSession<T>(fn: (lib: pkcs11js.PKCS11, session: Buffer, slot: Buffer) => T): T;
  /** Takes the token away (as an HSM outage would) until the returned function puts it back. */
  takeAway(): () => void;
  remove(): void;
}

/**
 * A fresh SoftHSM2 token in its own temporary token directory, initialised by softhsm2-util the
 * way an operator initialises a real one. One per test file (see softHsmEnvironment.js).
 */
export function createSoftHsmToken(label = `tessera-${process.pid}`): SoftHsmToken {
  // Set by softHsmEnvironment.js in the real environment, where the module in this process reads it.
  const conf = process.env.SOFTHSM2_CONF;
  if (conf === undefined || fs.existsSync(conf)) {
    throw new Error('run this test file with the docblock @jest-environment ./packages/test-support/src/softHsmEnvironment.js');
  }
  const dir = path.dirname(conf);
  const tokens = path.join(dir, 'tokens');
  fs.mkdirSync(tokens);
  fs.writeFileSync(conf, `directories.tokendir = ${tokens}\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n`);
  const pin = `pin-${Math.random().toString(36).slice(2, 10)}`;
  const init = spawnSync('softhsm2-util', ['--init-token', '--free', '--label', label, '--pin', pin, '--so-pin', `so-${pin}`], {
    env: { ...process.env, SOFTHSM2_CONF: conf },
    encoding: 'utf8',
  });
  if (init.status !== 0) throw new Error(`softhsm2-util --init-token failed: ${init.stderr}${init.stdout}`);

  const withSession = <T>(fn: (lib: pkcs11js.PKCS11, session: Buffer, slot: Buffer) => T): T => {
    const lib = new pkcs11js.PKCS11();
    lib.load(SOFTHSM_MODULE);
    try {
      lib.C_Initialize();
    } catch (err) {
      if ((err as pkcs11js.Pkcs11Error).code !== pkcs11js.CKR_CRYPTOKI_ALREADY_INITIALIZED) throw err;
    }
    try {
      const slot = lib.C_GetSlotList(true).find((s) => lib.C_GetTokenInfo(s).label.trim() === label);
      if (slot === undefined) throw new Error(`no token ${label}`);
      const session = lib.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
      try {
        lib.C_Login(session, pkcs11js.CKU_USER, pin);
      } catch (err) {
        if ((err as pkcs11js.Pkcs11Error).code !== pkcs11js.CKR_USER_ALREADY_LOGGED_IN) throw err;
      }
      try {
        return fn(lib, session, slot);
      } finally {
        ckrNameOf(() => lib.C_CloseSession(session));
      }
    } finally {
      // This finalises the module for the whole process: a key ring open in this process must recover from that.
      ckrNameOf(() => lib.C_Finalize());
    }
  };

  return {
    conf,
    label,
    pin,
    vaultEnv: () => ({ SOFTHSM2_CONF: conf, PKCS11_MODULE: SOFTHSM_MODULE, PKCS11_TOKEN_LABEL: label, PKCS11_PIN: pin }),
    createKek: (keyLabel, options = {}) =>
      withSession((lib, session) => {
        lib.C_GenerateKey(session, { mechanism: pkcs11js.CKM_AES_KEY_GEN }, [
          { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
          { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_AES },
          { type: pkcs11js.CKA_VALUE_LEN, value: 32 },
          { type: pkcs11js.CKA_LABEL, value: keyLabel },
          { type: pkcs11js.CKA_TOKEN, value: true },
          { type: pkcs11js.CKA_PRIVATE, value: true },
          { type: pkcs11js.CKA_SENSITIVE, value: !options.extractable },
          { type: pkcs11js.CKA_EXTRACTABLE, value: options.extractable === true },
          { type: pkcs11js.CKA_ENCRYPT, value: true },
          { type: pkcs11js.CKA_DECRYPT, value: true },
        ]);
      }),
    withSession,
    takeAway: () => {
      fs.renameSync(tokens, `${tokens}.away`);
      return () => fs.renameSync(`${tokens}.away`, tokens);
    },
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/** The CKR_* name a PKCS#11 call failed with, or 'ok' when it did not fail. */
export function ckrNameOf(call: () => unknown): string {
  try {
    call();
    return 'ok';
  } catch (err) {
    return /CKR_[A-Z0-9_]+/.exec((err as Error).message)?.[0] ?? (err as Error).message;
  }
}

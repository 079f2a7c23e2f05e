import * as pkcs11js from 'pkcs11js';
import { TesseraError, secureRandomBytes, type Logger } from '@tessera/common';
import { EnvelopeOpenError, IV_BYTES, TAG_BYTES, decodeSealed, type Sealed } from '../domain/aesGcm';
import type { KeyRing } from '../domain/keyRing';
import type { HsmKey, Pkcs11Settings } from './pkcs11Settings';

/**
 * Key-encryption keys inside an HSM, used over PKCS#11 (docs/adr/0009). A data key is wrapped
 * with C_Encrypt under CKM_AES_GCM: the KEK never leaves the HSM, and GCM binds the same
 * additional data (merchant, token, kind, mode, key id) as VAULT_KEYS keys do, which AES key wrap
 * (RFC 3394/5649) cannot. The stored shape is identical to a VAULT_KEYS wrap (12-byte IV,
 * ciphertext, 16-byte tag), so records of both providers coexist and move between them.
 *
 * One session, logged in once at start and reused: PKCS#11 calls here are synchronous, so two
 * operations never interleave on it. A lost session (HSM restart, network HSM failover) is
 * reopened once per call; if that fails the call is `service_unavailable`, never a crash.
 */

/** Results that mean the session or login is gone: reopen it and retry once. */
const SESSION_LOST = new Set<number>([
  pkcs11js.CKR_SESSION_HANDLE_INVALID,
  pkcs11js.CKR_SESSION_CLOSED,
  pkcs11js.CKR_USER_NOT_LOGGED_IN,
  pkcs11js.CKR_DEVICE_REMOVED,
  pkcs11js.CKR_DEVICE_ERROR,
  pkcs11js.CKR_TOKEN_NOT_PRESENT,
  pkcs11js.CKR_KEY_HANDLE_INVALID,
  pkcs11js.CKR_OBJECT_HANDLE_INVALID,
  pkcs11js.CKR_OPERATION_ACTIVE,
  pkcs11js.CKR_CRYPTOKI_NOT_INITIALIZED,
]);

/**
 * Results of C_Decrypt that mean the ciphertext did not authenticate. SoftHSM2 reports a GCM tag
 * mismatch as CKR_GENERAL_ERROR; PKCS#11 3.0 HSMs as CKR_AEAD_DECRYPT_FAILED (0x35).
 */
const CKR_AEAD_DECRYPT_FAILED = 0x35;
const NOT_AUTHENTIC = new Set<number>([
  pkcs11js.CKR_ENCRYPTED_DATA_INVALID,
  pkcs11js.CKR_ENCRYPTED_DATA_LEN_RANGE,
  pkcs11js.CKR_GENERAL_ERROR,
  CKR_AEAD_DECRYPT_FAILED,
]);

/** After a failed reopen, calls fail fast for this long instead of hammering a down HSM. */
const REOPEN_BACKOFF_MS = 1000;

export class HsmError extends Error {
  constructor(
    message: string,
    readonly ckr?: string,
  ) {
    super(ckr === undefined ? message : `${message} (${ckr})`);
    this.name = 'HsmError';
  }
}

/** The CKR_* name of a PKCS#11 failure, the only detail that is logged (never a PIN or key). */
export function ckrOf(err: unknown): string | undefined {
  if (err instanceof pkcs11js.Pkcs11Error) return /CKR_[A-Z0-9_]+/.exec(err.message)?.[0] ?? `0x${err.code.toString(16)}`;
  return undefined;
}

function codeOf(err: unknown): number | undefined {
  return err instanceof pkcs11js.Pkcs11Error ? err.code : undefined;
}

function slotIdOf(handle: Buffer): bigint {
  return handle.length >= 8 ? handle.readBigUInt64LE(0) : BigInt(handle.readUInt32LE(0));
}

function describeToken(token: Pkcs11Settings['token']): string {
  return 'label' in token ? `token "${token.label}"` : `slot ${token.slotId}`;
}

/** Loads the module and finds the slot; the caller owns the returned library and finalizes it. */
function openLibrary(settings: Pkcs11Settings): { lib: pkcs11js.PKCS11; slot: Buffer } {
  const lib = new pkcs11js.PKCS11();
  try {
    lib.load(settings.modulePath);
  } catch (err) {
    throw new HsmError(`cannot load the PKCS#11 module ${settings.modulePath}: ${(err as Error).message}`);
  }
  try {
    initialize(lib);
    return { lib, slot: findSlot(lib, settings) };
  } catch (err) {
    finalize(lib);
    throw err;
  }
}

function initialize(lib: pkcs11js.PKCS11): void {
  try {
    lib.C_Initialize();
  } catch (err) {
    if (codeOf(err) !== pkcs11js.CKR_CRYPTOKI_ALREADY_INITIALIZED) throw new HsmError('C_Initialize failed', ckrOf(err));
  }
}

function findSlot(lib: pkcs11js.PKCS11, settings: Pkcs11Settings): Buffer {
  const token = settings.token;
  const slot = lib
    .C_GetSlotList(true)
    .find((s) => ('label' in token ? lib.C_GetTokenInfo(s).label.trim() === token.label : slotIdOf(s) === token.slotId));
  if (slot === undefined) throw new HsmError(`no ${describeToken(token)} with a token present in ${settings.modulePath}`);
  return slot;
}

function finalize(lib: pkcs11js.PKCS11): void {
  try {
    lib.C_Finalize();
  } catch {
    // already finalized or the module is gone: nothing left to release
  }
}

function login(lib: pkcs11js.PKCS11, session: Buffer, settings: Pkcs11Settings): void {
  try {
    lib.C_Login(session, pkcs11js.CKU_USER, settings.pin.reveal());
  } catch (err) {
    if (codeOf(err) === pkcs11js.CKR_USER_ALREADY_LOGGED_IN) return;
    // The message names the result code only: pkcs11js errors never carry the PIN, and neither does this.
    throw new HsmError(`login to ${describeToken(settings.token)} failed`, ckrOf(err));
  }
}

function findKey(lib: pkcs11js.PKCS11, session: Buffer, label: string): Buffer[] {
  lib.C_FindObjectsInit(session, [
    { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
    { type: pkcs11js.CKA_LABEL, value: label },
  ]);
  try {
    return lib.C_FindObjects(session, 2);
  } finally {
    lib.C_FindObjectsFinal(session);
  }
}

/**
 * The handle of a KEK, refused unless it is a 256-bit AES key that may encrypt and decrypt and
 * can never be exported in clear (CKA_SENSITIVE true, CKA_EXTRACTABLE false): PCI DSS 3.6.1.2.
 */
function kekHandle(lib: pkcs11js.PKCS11, session: Buffer, key: HsmKey): Buffer {
  const found = findKey(lib, session, key.label);
  const [handle] = found;
  if (handle === undefined) throw new HsmError(`key id "${key.keyId}": no secret key labelled "${key.label}" in the token`);
  if (found.length > 1) throw new HsmError(`key id "${key.keyId}": more than one key labelled "${key.label}" in the token`);
  const attrs = lib.C_GetAttributeValue(session, handle, [
    { type: pkcs11js.CKA_KEY_TYPE },
    { type: pkcs11js.CKA_VALUE_LEN },
    { type: pkcs11js.CKA_ENCRYPT },
    { type: pkcs11js.CKA_DECRYPT },
    { type: pkcs11js.CKA_SENSITIVE },
    { type: pkcs11js.CKA_EXTRACTABLE },
  ]);
  const num = (i: number): number => {
    const v = attrs[i]?.value;
    return Buffer.isBuffer(v) && v.length > 0 ? Number(v.length >= 8 ? v.readBigUInt64LE(0) : v.readUIntLE(0, v.length)) : -1;
  };
  const bool = (i: number): boolean => {
    const v = attrs[i]?.value;
    return Buffer.isBuffer(v) && v.length > 0 && v[0] !== 0;
  };
  const problems: string[] = [];
  if (num(0) !== pkcs11js.CKK_AES || num(1) !== 32) problems.push('must be a 256-bit AES key');
  if (!bool(2) || !bool(3)) problems.push('needs CKA_ENCRYPT and CKA_DECRYPT');
  if (!bool(4) || bool(5)) problems.push('must be CKA_SENSITIVE and not CKA_EXTRACTABLE (the key must never leave the HSM)');
  if (problems.length > 0) throw new HsmError(`key id "${key.keyId}" (label "${key.label}"): ${problems.join('; ')}`);
  return handle;
}

function gcmMechanism(iv: Buffer, aad: Buffer): pkcs11js.Mechanism {
  return {
    mechanism: pkcs11js.CKM_AES_GCM,
    parameter: { type: pkcs11js.CK_PARAMS_AES_GCM, iv, aad, ivBits: IV_BYTES * 8, tagBits: TAG_BYTES * 8 } as pkcs11js.AesGCM,
  };
}

export class Pkcs11KeyRing implements KeyRing {
  readonly currentKeyId: string;
  readonly keyIds: readonly string[];
  private session: Buffer | undefined;
  private handles = new Map<string, Buffer>();
  private reopenFailedAt = 0;
  private closed = false;

  private constructor(
    private readonly lib: pkcs11js.PKCS11,
    private slot: Buffer,
    private readonly settings: Pkcs11Settings,
    private readonly logger: Logger | undefined,
  ) {
    const ids = settings.keys.map((k) => k.keyId);
    const current = ids[ids.length - 1];
    if (current === undefined) throw new HsmError('PKCS11_KEYS lists no key');
    this.keyIds = ids;
    this.currentKeyId = current;
  }

  /** Loads the module, logs in and checks every listed key; throws HsmError naming what is wrong. */
  static open(settings: Pkcs11Settings, logger?: Logger): Pkcs11KeyRing {
    const { lib, slot } = openLibrary(settings);
    const ring = new Pkcs11KeyRing(lib, slot, settings, logger);
    try {
      ring.connect();
      ring.selfTest();
    } catch (err) {
      ring.close();
      if (err instanceof HsmError) throw err;
      throw new HsmError(`${describeToken(settings.token)}: ${(err as Error).message}`, ckrOf(err));
    }
    return ring;
  }

  providerOf(keyId: string): 'pkcs11' | undefined {
    return this.keyIds.includes(keyId) ? 'pkcs11' : undefined;
  }

  wrap(keyId: string, plaintext: Buffer, aad: Buffer): Sealed {
    const iv = secureRandomBytes(IV_BYTES);
    const out = this.call(keyId, 'wrap', (session, key) => {
      this.lib.C_EncryptInit(session, gcmMechanism(iv, aad), key);
      return this.lib.C_Encrypt(session, plaintext, Buffer.alloc(plaintext.length + TAG_BYTES));
    });
    if (out.length !== plaintext.length + TAG_BYTES)
      throw new TesseraError('internal_error', { message: 'The HSM returned an unexpected length.' });
    return {
      iv: iv.toString('base64'),
      ciphertext: out.subarray(0, plaintext.length).toString('base64'),
      tag: out.subarray(plaintext.length).toString('base64'),
    };
  }

  unwrap(keyId: string, sealed: Sealed, aad: Buffer): Buffer {
    const { iv, ciphertext, tag } = decodeSealed(sealed);
    const input = Buffer.concat([ciphertext, tag]);
    return this.call(keyId, 'unwrap', (session, key) => {
      this.lib.C_DecryptInit(session, gcmMechanism(iv, aad), key);
      try {
        // GCM decryption may need the whole input as output room before it strips the tag.
        return this.lib.C_Decrypt(session, input, Buffer.alloc(input.length));
      } catch (err) {
        const code = codeOf(err);
        if (code !== undefined && NOT_AUTHENTIC.has(code)) throw new EnvelopeOpenError('authentication_failed');
        throw err;
      }
    });
  }

  /** Logs out and releases the module; safe to call twice. */
  close(): void {
    this.closed = true;
    if (this.session !== undefined) {
      try {
        this.lib.C_Logout(this.session);
      } catch {
        // the session may already be gone with the HSM
      }
      try {
        this.lib.C_CloseSession(this.session);
      } catch {
        // as above
      }
      this.session = undefined;
    }
    finalize(this.lib);
  }

  /**
   * A wrap and unwrap with every key before the vault serves: an HSM that ignores the caller's
   * GCM IV and makes its own (AWS CloudHSM does, and writes it where pkcs11js cannot read it back)
   * would otherwise produce records that never open again.
   */
  private selfTest(): void {
    const probe = secureRandomBytes(32);
    const aad = Buffer.from('tessera.kek-self-test', 'utf8');
    for (const keyId of this.keyIds) {
      let roundTrip: Buffer | undefined;
      try {
        roundTrip = this.unwrap(keyId, this.wrap(keyId, probe, aad), aad);
      } catch (err) {
        if (!(err instanceof EnvelopeOpenError)) throw err;
      }
      if (roundTrip === undefined || !roundTrip.equals(probe)) {
        throw new HsmError(
          `key id "${keyId}": a CKM_AES_GCM wrap under it does not unwrap again; the HSM may generate its own GCM IVs, which Tessera does not support (docs/adr/0009)`,
        );
      }
    }
  }

  private connect(): void {
    const session = this.lib.C_OpenSession(this.slot, pkcs11js.CKF_SERIAL_SESSION);
    this.session = session;
    login(this.lib, session, this.settings);
    const handles = new Map<string, Buffer>();
    for (const key of this.settings.keys) handles.set(key.keyId, kekHandle(this.lib, session, key));
    this.handles = handles;
  }

  /**
   * A new session and login, and the key handles found again (an HSM may renumber them). The
   * module is initialised again too: a network HSM client, or another user of the module in this
   * process, may have finalised it.
   */
  private reconnect(): void {
    if (this.closed) throw new HsmError('the HSM key ring is closed');
    if (Date.now() - this.reopenFailedAt < REOPEN_BACKOFF_MS) throw new HsmError('the HSM session was lost; waiting before reopening it');
    if (this.session !== undefined) {
      try {
        this.lib.C_CloseSession(this.session);
      } catch {
        // already invalid: that is why we are here
      }
      this.session = undefined;
    }
    try {
      initialize(this.lib);
      this.slot = findSlot(this.lib, this.settings);
      this.connect();
      this.reopenFailedAt = 0;
      this.logger?.warn('HSM session reopened');
    } catch (err) {
      this.reopenFailedAt = Date.now();
      throw err;
    }
  }

  /** Runs one operation, reopening a lost session once; HSM failures become service_unavailable. */
  private call<T>(keyId: string, operation: string, op: (session: Buffer, key: Buffer) => T): T {
    if (!this.keyIds.includes(keyId)) throw new EnvelopeOpenError('unknown_key');
    try {
      try {
        return this.withSession(keyId, op);
      } catch (err) {
        const code = codeOf(err);
        if (code === undefined || !SESSION_LOST.has(code)) throw err;
        this.logger?.warn({ ckr: ckrOf(err), operation }, 'HSM session lost; reopening it');
        this.reconnect();
        return this.withSession(keyId, op);
      }
    } catch (err) {
      if (err instanceof EnvelopeOpenError || err instanceof TesseraError) throw err;
      const ckr = err instanceof HsmError ? err.ckr : ckrOf(err);
      this.logger?.error({ ckr, operation, keyId, detail: (err as Error).message }, 'HSM operation failed');
      throw new TesseraError('service_unavailable', { message: 'The key store is unavailable.' });
    }
  }

  private withSession<T>(keyId: string, op: (session: Buffer, key: Buffer) => T): T {
    if (this.session === undefined) this.reconnect();
    const session = this.session;
    const key = this.handles.get(keyId);
    if (session === undefined || key === undefined) throw new HsmError('the HSM session is not open');
    return op(session, key);
  }
}

/**
 * Creates a new KEK inside the token (for `npm run vault -- rotate` with the HSM): AES-256,
 * generated by the HSM, persistent, private, sensitive and never extractable, usable only to
 * encrypt and decrypt. Refuses a label already in use.
 */
export function generateHsmKek(settings: Pkcs11Settings, label: string): void {
  const { lib, slot } = openLibrary(settings);
  let session: Buffer | undefined;
  try {
    session = lib.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
    login(lib, session, settings);
    if (findKey(lib, session, label).length > 0) throw new HsmError(`the token already holds a key labelled "${label}"`);
    lib.C_GenerateKey(session, { mechanism: pkcs11js.CKM_AES_KEY_GEN }, [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
      { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_AES },
      { type: pkcs11js.CKA_VALUE_LEN, value: 32 },
      { type: pkcs11js.CKA_LABEL, value: label },
      { type: pkcs11js.CKA_TOKEN, value: true },
      { type: pkcs11js.CKA_PRIVATE, value: true },
      { type: pkcs11js.CKA_SENSITIVE, value: true },
      { type: pkcs11js.CKA_EXTRACTABLE, value: false },
      { type: pkcs11js.CKA_ENCRYPT, value: true },
      { type: pkcs11js.CKA_DECRYPT, value: true },
      { type: pkcs11js.CKA_WRAP, value: false },
      { type: pkcs11js.CKA_UNWRAP, value: false },
      { type: pkcs11js.CKA_SIGN, value: false },
      { type: pkcs11js.CKA_VERIFY, value: false },
    ]);
  } catch (err) {
    if (err instanceof HsmError) throw err;
    throw new HsmError(`generating a key in ${describeToken(settings.token)} failed`, ckrOf(err));
  } finally {
    if (session !== undefined) {
      try {
        lib.C_Logout(session);
        lib.C_CloseSession(session);
      } catch {
        // closing is best effort
      }
    }
    finalize(lib);
  }
}

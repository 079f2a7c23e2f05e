/**
 * @jest-environment ./packages/test-support/src/softHsmEnvironment.js
 */
import * as pkcs11js from 'pkcs11js';
import { TesseraError } from '@tessera/common';
import { ckrNameOf, createSoftHsmToken, SOFTHSM_MODULE, type SoftHsmToken } from '@tessera/test-support/softHsm';
import { EnvelopeOpenError } from '../domain/aesGcm';
import { openRecord, rewrapRecord, sealRecord, type EnvelopeContext } from '../domain/envelope';
import { combineKeyRings } from '../domain/keyRing';
import { keyRingEntry, keyRingOf } from '../test/builders';
import { HsmError, Pkcs11KeyRing } from './pkcs11KeyRing';
import { Secret, type Pkcs11Settings } from './pkcs11Settings';

let hsm: SoftHsmToken;
const opened: Pkcs11KeyRing[] = [];

beforeAll(() => {
  hsm = createSoftHsmToken();
  hsm.createKek('kek-one');
  hsm.createKek('kek-two');
  hsm.createKek('kek-exportable', { extractable: true });
});

afterEach(() => {
  for (const ring of opened.splice(0)) ring.close();
});

afterAll(() => hsm.remove());

function settings(overrides: Partial<Pkcs11Settings> = {}): Pkcs11Settings {
  return {
    modulePath: SOFTHSM_MODULE,
    token: { label: hsm.label },
    pin: new Secret(hsm.pin),
    keys: [
      { keyId: 'h1', label: 'kek-one' },
      { keyId: 'h2', label: 'kek-two' },
    ],
    ...overrides,
  };
}

function open(overrides: Partial<Pkcs11Settings> = {}): Pkcs11KeyRing {
  const ring = Pkcs11KeyRing.open(settings(overrides));
  opened.push(ring);
  return ring;
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

const ctx: EnvelopeContext = { merchantId: 'merchant_a', token: 'tok.abc', kind: 'card', mode: 'test' };
const secret = Buffer.from('{"number":"4242424242424242","holderName":"Ada"}');

describe('the PKCS#11 key ring (SoftHSM2)', () => {
  it('wraps data keys inside the HSM under the newest listed key and opens them again', () => {
    const ring = open();
    expect(ring.currentKeyId).toBe('h2');
    const envelope = sealRecord(ring, ctx, secret);
    expect(envelope.keyId).toBe('h2');
    expect(Buffer.from(envelope.wrappedKey, 'base64')).toHaveLength(32);
    expect(Buffer.from(envelope.wrapTag, 'base64')).toHaveLength(16);
    expect(openRecord(ring, ctx, envelope).equals(secret)).toBe(true);
  });

  it('binds the record context into the wrap: another token, a changed byte or an unlisted key does not open', () => {
    const ring = open();
    const envelope = sealRecord(ring, ctx, secret);
    expect(thrown(() => openRecord(ring, { ...ctx, token: 'tok.other' }, envelope))).toBeInstanceOf(EnvelopeOpenError);
    const tag = Buffer.from(envelope.wrapTag, 'base64');
    tag[0] = (tag[0] ?? 0) ^ 1;
    const tampered = { ...envelope, wrapTag: tag.toString('base64') };
    expect(thrown(() => openRecord(ring, ctx, tampered))).toMatchObject({ reason: 'authentication_failed' });
    expect(thrown(() => openRecord(ring, ctx, { ...envelope, keyId: 'nope' }))).toMatchObject({ reason: 'unknown_key' });
  });

  it('moves records between VAULT_KEYS and the HSM in both directions', () => {
    const hsmRing = open();
    const envRing = keyRingOf(keyRingEntry('e1'));
    const envRecord = sealRecord(envRing, ctx, secret);

    const toHsm = rewrapRecord(combineKeyRings(hsmRing, envRing), ctx, envRecord);
    expect(toHsm.keyId).toBe('h2');
    expect(toHsm.ciphertext).toBe(envRecord.ciphertext);
    expect(thrown(() => openRecord(envRing, ctx, toHsm))).toMatchObject({ reason: 'unknown_key' });
    expect(openRecord(hsmRing, ctx, toHsm).equals(secret)).toBe(true);

    const back = rewrapRecord(combineKeyRings(envRing, hsmRing), ctx, toHsm);
    expect(back.keyId).toBe('e1');
    expect(openRecord(envRing, ctx, back).equals(secret)).toBe(true);
  });

  it('refuses a key that could leave the HSM, a missing label and a wrong PIN, naming neither PIN nor key', () => {
    const exportable = thrown(() => open({ keys: [{ keyId: 'x1', label: 'kek-exportable' }] }));
    expect(exportable).toBeInstanceOf(HsmError);
    expect((exportable as Error).message).toContain('not CKA_EXTRACTABLE');

    expect((thrown(() => open({ keys: [{ keyId: 'm1', label: 'no-such-key' }] })) as Error).message).toContain(
      'no secret key labelled "no-such-key"',
    );

    const wrongPin = thrown(() => open({ pin: new Secret('wrong-pin-1234') })) as HsmError;
    expect(wrongPin).toBeInstanceOf(HsmError);
    expect(wrongPin.message).toContain('CKR_PIN_INCORRECT');
    expect(wrongPin.message).not.toContain('wrong-pin-1234');
    expect(JSON.stringify(settings())).not.toContain(hsm.pin);
  });

  it('reopens a session the HSM closed, answers service_unavailable while the HSM is away, and recovers', async () => {
    const ring = open();
    const envelope = sealRecord(ring, ctx, secret);
    // Another handle on the same module closes every session of the slot, as an HSM restart would (and finalises the module).
    hsm.withSession((lib, _session, slot) => lib.C_CloseAllSessions(slot));
    expect(openRecord(ring, ctx, envelope).equals(secret)).toBe(true);

    hsm.withSession((lib, _session, slot) => lib.C_CloseAllSessions(slot));
    const putBack = hsm.takeAway();
    try {
      const err = thrown(() => openRecord(ring, ctx, envelope));
      expect(err).toBeInstanceOf(TesseraError);
      expect((err as TesseraError).code).toBe('service_unavailable');
      expect(JSON.stringify({ err, message: (err as Error).message })).not.toContain(hsm.pin);
    } finally {
      putBack();
    }
    // Reopening waits a moment after a failure, so a down HSM is not hammered.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(openRecord(ring, ctx, envelope).equals(secret)).toBe(true);
  });

  it('keeps the key-encryption key inside the HSM: its value cannot be read', () => {
    open();
    const result = hsm.withSession((lib, session) => {
      lib.C_FindObjectsInit(session, [{ type: pkcs11js.CKA_LABEL, value: 'kek-one' }]);
      const [handle] = lib.C_FindObjects(session, 1);
      lib.C_FindObjectsFinal(session);
      if (handle === undefined) throw new Error('kek-one is missing');
      return ckrNameOf(() => lib.C_GetAttributeValue(session, handle, [{ type: pkcs11js.CKA_VALUE }]));
    });
    expect(result).toBe('CKR_ATTRIBUTE_SENSITIVE');
  });
});

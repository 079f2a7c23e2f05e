import { randomBytes } from 'node:crypto';
import { combineKeyRings, generateKeyRingEntry, parseKeyRing } from './keyRing';

const key32 = (): string => randomBytes(32).toString('base64');

describe('parseKeyRing', () => {
  it('makes the last listed key the current one and keeps every key for decryption', () => {
    const first = randomBytes(32);
    const second = randomBytes(32);
    const parsed = parseKeyRing(`k1:${first.toString('base64')}, k2:${second.toString('base64')}`);
    if (!parsed.ok) throw new Error(parsed.problems.join());
    expect(parsed.ring.currentKeyId).toBe('k2');
    expect(parsed.ring.keyIds).toEqual(['k1', 'k2']);
    expect(parsed.ring.key('k1')?.equals(first)).toBe(true);
    expect(parsed.ring.key('k2')?.equals(second)).toBe(true);
    expect(parsed.ring.key('k3')).toBeUndefined();
  });

  it('accepts a generated entry', () => {
    const parsed = parseKeyRing(generateKeyRingEntry('dev1'));
    expect(parsed.ok && parsed.ring.currentKeyId).toBe('dev1');
  });

  it('rejects a key id listed twice', () => {
    const parsed = parseKeyRing(`k1:${key32()},k1:${key32()}`);
    expect(parsed).toEqual({ ok: false, problems: ['entry 2: key id "k1" is listed more than once'] });
  });

  it('rejects keys that are not 32 bytes and says how long they were', () => {
    const parsed = parseKeyRing(`short:${randomBytes(16).toString('base64')}`);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.problems[0]).toContain('decodes to 16 bytes');
  });

  it('rejects invalid key ids, missing colons and non-base64 material, listing every problem', () => {
    const parsed = parseKeyRing(`bad id:${key32()},nocolon,k3:not*base64!`);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems).toHaveLength(3);
    expect(parsed.problems[0]).toMatch(/entry 1: key id must be/);
    expect(parsed.problems[1]).toMatch(/entry 2 must be keyId:base64/);
    expect(parsed.problems[2]).toMatch(/entry 3 .*not valid base64/);
  });

  it('never echoes key material in its problems', () => {
    const material = randomBytes(31).toString('base64');
    const parsed = parseKeyRing(`k1:${material},${material}`);
    expect(parsed.ok).toBe(false);
    expect(JSON.stringify(parsed)).not.toContain(material);
  });

  it('rejects an empty list', () => {
    expect(parseKeyRing(' , ').ok).toBe(false);
  });

  it('rejects key ids longer than 32 characters', () => {
    expect(parseKeyRing(`${'a'.repeat(33)}:${key32()}`).ok).toBe(false);
    expect(parseKeyRing(`${'a'.repeat(32)}:${key32()}`).ok).toBe(true);
  });
});

describe('the key ring as a key-encryption-key provider', () => {
  const aad = Buffer.from('tessera.v3.dek|merchant_a|tok.abc|k1|card|test');
  const dataKey = randomBytes(32);

  function ringOf(text: string) {
    const parsed = parseKeyRing(text);
    if (!parsed.ok) throw new Error(parsed.problems.join());
    return parsed.ring;
  }

  it('wraps under a named key and unwraps only with the same key and additional data', () => {
    const ring = ringOf(`k1:${key32()},k2:${key32()}`);
    const wrapped = ring.wrap('k1', dataKey, aad);
    expect(Buffer.from(wrapped.ciphertext, 'base64').equals(dataKey)).toBe(false);
    expect(ring.unwrap('k1', wrapped, aad).equals(dataKey)).toBe(true);
    expect(() => ring.unwrap('k2', wrapped, aad)).toThrow(expect.objectContaining({ reason: 'authentication_failed' }));
    expect(() => ring.unwrap('k1', wrapped, Buffer.from('other'))).toThrow(expect.objectContaining({ reason: 'authentication_failed' }));
    expect(() => ring.wrap('k9', dataKey, aad)).toThrow(expect.objectContaining({ reason: 'unknown_key' }));
    expect(ring.providerOf('k1')).toBe('env');
    expect(ring.providerOf('k9')).toBeUndefined();
  });

  it('combines a current ring with read-only keys of another: new wraps use the current ring, old ones still open', () => {
    const legacy = ringOf(`old:${key32()}`);
    const current = ringOf(`new1:${key32()},new2:${key32()}`);
    const oldWrap = legacy.wrap('old', dataKey, aad);
    const combined = combineKeyRings(current, legacy);
    expect(combined.currentKeyId).toBe('new2');
    expect(combined.keyIds).toEqual(['old', 'new1', 'new2']);
    expect(combined.unwrap('old', oldWrap, aad).equals(dataKey)).toBe(true);
    expect(current.unwrap('new2', combined.wrap('new2', dataKey, aad), aad).equals(dataKey)).toBe(true);
    expect(combineKeyRings(current, undefined)).toBe(current);
    expect(() => combineKeyRings(current, ringOf(`new1:${key32()}`))).toThrow('key ids are listed by both providers: new1');
  });
});

import { randomBytes } from 'node:crypto';
import { generateKeyRingEntry, parseKeyRing } from './keyRing';

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

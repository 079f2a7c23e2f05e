import { base32Decode, base32Encode, hotp, matchTotp, otpauthUri, totp, totpStep } from './totp';

const RFC_SECRET = Buffer.from('12345678901234567890', 'ascii');

describe('TOTP (RFC 6238)', () => {
  it.each([
    [59, '94287082'],
    [1111111109, '07081804'],
    [1111111111, '14050471'],
    [1234567890, '89005924'],
    [2000000000, '69279037'],
    [20000000000, '65353130'],
  ])('gives the RFC 6238 appendix B SHA-1 value at T=%i', (seconds, expected) => {
    expect(totp(RFC_SECRET, seconds * 1000, 8)).toBe(expected);
  });

  it('gives the RFC 4226 appendix D HOTP values, truncated to 6 digits', () => {
    const expected = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489'];
    expect(expected.map((_, counter) => hotp(RFC_SECRET, counter))).toEqual(expected);
  });

  it('encodes and decodes base32 as RFC 4648 does, tolerating case, spaces and padding', () => {
    expect(base32Encode(Buffer.from('foobar'))).toBe('MZXW6YTBOI');
    expect(base32Encode(Buffer.from('f'))).toBe('MY');
    expect(base32Decode('mzxw 6ytb oi======')?.toString()).toBe('foobar');
    expect(base32Decode('MZXW1')).toBeUndefined();
    expect(base32Decode(base32Encode(RFC_SECRET))).toEqual(RFC_SECRET);
  });

  it('accepts the code of the current step and of one step either side, nothing further', () => {
    const now = 1_700_000_000_000;
    const step = totpStep(now);
    for (const offset of [-1, 0, 1]) expect(matchTotp(RFC_SECRET, hotp(RFC_SECRET, step + offset), now, undefined)).toBe(step + offset);
    for (const offset of [-2, 2]) expect(matchTotp(RFC_SECRET, hotp(RFC_SECRET, step + offset), now, undefined)).toBeUndefined();
    expect(matchTotp(RFC_SECRET, '12345', now, undefined)).toBeUndefined();
    expect(matchTotp(RFC_SECRET, 'abcdef', now, undefined)).toBeUndefined();
  });

  it('refuses a code of a step already used, and any older one (replay)', () => {
    const now = 1_700_000_000_000;
    const step = totpStep(now);
    const code = hotp(RFC_SECRET, step);
    expect(matchTotp(RFC_SECRET, code, now, step)).toBeUndefined();
    expect(matchTotp(RFC_SECRET, hotp(RFC_SECRET, step - 1), now, step)).toBeUndefined();
    expect(matchTotp(RFC_SECRET, hotp(RFC_SECRET, step + 1), now, step)).toBe(step + 1);
  });

  it('writes the otpauth:// URI authenticator apps import', () => {
    const uri = otpauthUri({ issuer: 'Tessera', account: 'ops@acme.test', secret: RFC_SECRET });
    expect(uri).toBe(
      'otpauth://totp/Tessera:ops%40acme.test?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Tessera&algorithm=SHA1&digits=6&period=30',
    );
  });
});

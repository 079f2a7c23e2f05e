import {
  answerBytes,
  idempotencyKeys,
  idempotencyScope,
  isReplayable,
  isValidIdempotencyKey,
  openResponse,
  replayableHeaders,
  requestFingerprint,
  sealResponse,
  usageWindow,
  USAGE_SLICES,
} from './idempotency';

const keys = idempotencyKeys('p'.repeat(32));

describe('idempotency rules', () => {
  it('accepts 1 to 255 printable ASCII characters, not padded', () => {
    expect(isValidIdempotencyKey('order-42')).toBe(true);
    expect(isValidIdempotencyKey('a b')).toBe(true);
    expect(isValidIdempotencyKey('k'.repeat(255))).toBe(true);
    for (const bad of ['', ' x', 'x ', 'k'.repeat(256), 'caf\u00e9', 'a\nb']) expect(isValidIdempotencyKey(bad)).toBe(false);
  });

  it('scopes keys per merchant and mode without keeping the key itself', () => {
    expect(idempotencyScope('acme', 'test', 'order-42')).not.toBe(idempotencyScope('globex', 'test', 'order-42'));
    expect(idempotencyScope('acme', 'live', 'order-42')).not.toBe(idempotencyScope('acme', 'test', 'order-42'));
    expect(idempotencyScope('acme', 'test', 'order-42')).not.toContain('order-42');
    expect(idempotencyScope('acme', 'live', 'order-42')).not.toContain('order-42');
  });

  it('keeps the live scope as it was before modes were part of it, so an upgrade loses no live answer', () => {
    expect(idempotencyScope('acme', 'live', 'order-42')).toBe('acme:O_ixV8Qjju_lrkpm7Kgca4h9Tc7bWN1nQnGFn03C7f0');
    expect(idempotencyScope('acme', 'test', 'order-42')).toBe('acme:test:O_ixV8Qjju_lrkpm7Kgca4h9Tc7bWN1nQnGFn03C7f0');
  });

  it('counts usage in slices of the replay window that together cover every record still held', () => {
    const ttlMs = 86_400_000;
    const now = 1_800_000_123_456;
    const w = usageWindow(now, ttlMs);
    expect(w.sliceMs).toBe(3_600_000);
    expect(w.counted).toHaveLength(USAGE_SLICES + 1);
    expect(w.counted[0]).toBe(w.current);
    // A record written at the end of the oldest counted slice may still be alive now...
    const oldestStart = w.counted[USAGE_SLICES]! * w.sliceMs;
    expect(oldestStart + w.sliceMs - 1 + ttlMs).toBeGreaterThan(now);
    // ...and every record written before that slice has expired.
    expect(oldestStart - 1 + ttlMs).toBeLessThan(now);
    // The current slice's counter lives until its last record has expired.
    expect(w.currentExpiresAt).toBe(w.currentEndsAt + ttlMs);
    expect(w.currentEndsAt).toBeGreaterThan(now);
    expect(w.currentEndsAt - now).toBeLessThanOrEqual(w.sliceMs);
    expect(usageWindow(now, 5_000).sliceMs).toBe(1_000);
  });

  it('weighs an answer by its body and header bytes', () => {
    expect(
      answerBytes(
        [
          ['content-type', 'text/plain'],
          ['set-cookie', ['a=1', 'b=22']],
        ],
        100,
      ),
    ).toBe(100 + 12 + 10 + 10 + 3 + 4);
    expect(answerBytes([['x', '\u00e9']], 0)).toBe(1 + 2);
  });

  it('fingerprints route and body with a key, so equal requests match and nothing about the PAN is guessable without it', () => {
    const body = { number: '4242424242424242', expiryMonth: 12, expiryYear: 2030 };
    expect(requestFingerprint(keys.fingerprint, 'POST /v1/token', body)).toBe(
      requestFingerprint(keys.fingerprint, 'POST /v1/token', { ...body }),
    );
    expect(requestFingerprint(keys.fingerprint, 'POST /v1/proxy', body)).not.toBe(
      requestFingerprint(keys.fingerprint, 'POST /v1/token', body),
    );
    const otherPepper = idempotencyKeys('q'.repeat(32));
    expect(requestFingerprint(otherPepper.fingerprint, 'POST /v1/token', body)).not.toBe(
      requestFingerprint(keys.fingerprint, 'POST /v1/token', body),
    );
  });

  it('keeps every answer that says what happened, and releases the key only for 503 and 429', () => {
    for (const status of [200, 201, 400, 402, 404, 409, 422, 500, 502, 504]) expect(isReplayable(status)).toBe(true);
    expect(isReplayable(503)).toBe(false);
    expect(isReplayable(429)).toBe(false);
  });

  it('drops per-delivery headers from what is replayed', () => {
    expect(
      replayableHeaders({
        'x-request-id': 'r',
        'content-type': 'application/json',
        'x-tessera-total-ms': '3',
        'set-cookie': ['a', 'b'],
        'content-length': 5,
      }),
    ).toEqual([
      ['content-type', 'application/json'],
      ['set-cookie', ['a', 'b']],
      ['content-length', '5'],
    ]);
  });

  it('seals a stored answer so it opens only under its own scope', () => {
    const response = {
      status: 200,
      headers: [['content-type', 'text/plain']] as Array<[string, string]>,
      body: Buffer.from('card=4242424242424242'),
    };
    const sealed = sealResponse(keys.seal, 'acme:x', response);
    expect(sealed).not.toContain('4242');
    expect(openResponse(keys.seal, 'acme:x', sealed)).toEqual(response);
    expect(() => openResponse(keys.seal, 'globex:x', sealed)).toThrow();
  });
});

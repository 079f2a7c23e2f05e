import type { KeyMoveRequest } from '@tessera/merchant-data';
import { PEPPER_MOVE_REQUEST_INTERVAL_MS, requestPepperMoves } from './pepperMoves';

describe('asking the admin service to move a key to the newest pepper', () => {
  it('asks once per key per interval, and never reports the key as moved', async () => {
    const asked: KeyMoveRequest[] = [];
    let nowMs = Date.parse('2030-01-01T00:00:00Z');
    const move = requestPepperMoves({ request: async (r) => void asked.push(r) }, () => new Date(nowMs));
    const a = ['key_a', 'a'.repeat(64), 'b'.repeat(64), 'pep_1'] as const;
    expect(await move(...a)).toBe(false);
    expect(await move(...a)).toBe(false);
    expect(await move('key_b', 'c'.repeat(64), 'd'.repeat(64), 'pep_1')).toBe(false);
    expect(asked).toEqual([
      { keyId: 'key_a', foundDigest: 'a'.repeat(64), currentDigest: 'b'.repeat(64), pepperId: 'pep_1' },
      { keyId: 'key_b', foundDigest: 'c'.repeat(64), currentDigest: 'd'.repeat(64), pepperId: 'pep_1' },
    ]);
    // Not moved yet an interval later (the admin service refused, or has not run): asked again.
    nowMs += PEPPER_MOVE_REQUEST_INTERVAL_MS;
    await move(...a);
    expect(asked.map((r) => r.keyId)).toEqual(['key_a', 'key_b', 'key_a']);
  });
});

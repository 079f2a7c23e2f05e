import { randomId } from './randomIds';

describe('randomId', () => {
  it('is the prefix and 16 base64url characters (12 bytes)', () => {
    expect(randomId('dtk_')).toMatch(/^dtk_[A-Za-z0-9_-]{16}$/);
  });

  it('never repeats across refills of its pool, whichever prefix asks', () => {
    const ids = Array.from({ length: 1000 }, (_, i) => randomId(i % 2 === 0 ? 'a_' : 'b_').slice(2));
    expect(new Set(ids).size).toBe(ids.length);
  });
});

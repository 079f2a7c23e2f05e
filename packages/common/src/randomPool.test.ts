import { createRandomPool } from './randomPool';

describe('createRandomPool', () => {
  it('hands out fresh bytes of the asked size, across refills and beyond the pool size', () => {
    const take = createRandomPool(64);
    const seen = new Set<string>();
    for (let i = 0; i < 100; i++) {
      const bytes = take(12);
      expect(bytes).toHaveLength(12);
      seen.add(bytes.toString('hex'));
    }
    expect(seen.size).toBe(100);
    expect(take(100)).toHaveLength(100);
    expect(take(100).equals(Buffer.alloc(100))).toBe(false);
  });

  it('gives the caller its own copy: changing it does not change what comes next', () => {
    const take = createRandomPool(64);
    const first = take(16);
    first.fill(0);
    expect(take(16).equals(Buffer.alloc(16))).toBe(false);
  });
});

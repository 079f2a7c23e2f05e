import { chooseRequestId } from './requestContext';

describe('chooseRequestId', () => {
  it('keeps a caller id made of word characters, dots and dashes', () => {
    expect(chooseRequestId('client-42.a_b')).toBe('client-42.a_b');
  });

  it.each([['bad id'], ['x'.repeat(129)], [''], [['a', 'b']], [undefined]])('replaces %p with a generated id', (incoming) => {
    expect(chooseRequestId(incoming as string | string[] | undefined)).toMatch(/^req_[A-Za-z0-9_-]{16}$/);
  });

  it.each([
    ['4242424242424242'],
    ['4242_4242_4242_4242'],
    ['4242-4242.4242-4242'],
    ['3782-822463-10005'],
    ['500000000009'],
    ['req-4242424242424242'],
  ])('replaces %p, which could be a card number, with a generated id', (incoming) => {
    expect(chooseRequestId(incoming)).toMatch(/^req_[A-Za-z0-9_-]{16}$/);
  });

  it('never hands out the same generated id twice, across refills of its random pool', () => {
    const ids = Array.from({ length: 1000 }, () => chooseRequestId(undefined));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^req_[A-Za-z0-9_-]{16}$/);
  });
});

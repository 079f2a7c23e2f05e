import { TesseraError } from '@tessera/common';
import { refuseCardNumbers } from './cardData';

const url = (query = '') => new URL(`https://shop.example/orders${query}`);
const codeOf = (fn: () => void): string => {
  try {
    fn();
    return 'passed';
  } catch (err) {
    return err instanceof TesseraError ? err.code : 'other';
  }
};

describe('refuseCardNumbers (the proxy’s check of an inbound route’s rewritten request)', () => {
  it('passes a body and query without card numbers: tokens, amounts, ids, addresses', () => {
    const body = Buffer.from('{"card":"tok.AAAAAAAAAAAAAAAAAAAAAA","amount":1099,"order":"ord_12345","ip":"203.0.113.7, 198.51.100.22"}');
    expect(codeOf(() => refuseCardNumbers(url('?ref=tok.AAAAAAAAAAAAAAAAAAAAAA&page=2'), body))).toBe('passed');
    expect(codeOf(() => refuseCardNumbers(url(), Buffer.alloc(0)))).toBe('passed');
  });

  it('refuses a card number in the body however it is grouped or encoded', () => {
    for (const body of [
      '{"number":"4242424242424242"}',
      '{"number":"4242 4242 4242 4242"}',
      'number=4242-4242-4242-4242&cvc=123',
      'number=4242+4242+4242+4242',
      'number=4242%204242%204242%204242',
      'number=%34%32%34%32%34%32%34%32%34%32%34%32%34%32%34%32',
      'card: 3782-822463-10005\n',
    ]) {
      expect({ body, code: codeOf(() => refuseCardNumbers(url(), Buffer.from(body))) }).toEqual({ body, code: 'card_data_unmatched' });
    }
  });

  it('refuses a card number in the query, plain or percent-encoded', () => {
    expect(codeOf(() => refuseCardNumbers(url('?pan=4000056655665556'), Buffer.alloc(0)))).toBe('card_data_unmatched');
    expect(codeOf(() => refuseCardNumbers(url('?pan=4242%204242%204242%204242'), Buffer.alloc(0)))).toBe('card_data_unmatched');
  });

  it('passes over the listed Luhn-valid aliases only, and still finds a card beside one', () => {
    const alias = '4242421000084242';
    expect(codeOf(() => refuseCardNumbers(url(), Buffer.from(`{"number":"${alias}"}`)))).toBe('card_data_unmatched');
    expect(codeOf(() => refuseCardNumbers(url(), Buffer.from(`{"number":"${alias}"}`), [alias]))).toBe('passed');
    expect(codeOf(() => refuseCardNumbers(url(), Buffer.from(`{"number":"${alias}","b":"4000056655665556"}`), [alias]))).toBe(
      'card_data_unmatched',
    );
    // Written right beside the alias, a card's digits are judged on their own.
    expect(codeOf(() => refuseCardNumbers(url(), Buffer.from(`${alias} 4000056655665556`), [alias]))).toBe('card_data_unmatched');
  });

  it('ignores listed “aliases” that are not one card-number-like run, so a list cannot hide a card', () => {
    const body = Buffer.from('{"number":"4242424242424242"}');
    for (const aliases of [['4'], ['2'], ['"'], ['4242'], ['number":"4242424242424242'], ['']]) {
      expect({ aliases, code: codeOf(() => refuseCardNumbers(url(), body, aliases)) }).toEqual({ aliases, code: 'card_data_unmatched' });
    }
  });
});

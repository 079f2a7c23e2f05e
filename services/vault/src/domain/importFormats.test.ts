import { createRecordParser, splitCsvLine, type ParsedRecord } from './importFormats';

const parseAll = (format: 'jsonl' | 'csv' | 'stripe', lines: string[]): Array<ParsedRecord | null> => {
  const parser = createRecordParser(format);
  return lines.map((line) => parser.parse(line));
};

describe('JSON lines', () => {
  it('reads number, expiry, holder and the old id, in camelCase or snake_case', () => {
    expect(
      parseAll('jsonl', [
        '{"id":"old_1","number":"4242 4242 4242 4242","expiryMonth":12,"expiryYear":2030,"holderName":"Ada"}',
        '{"id":"old_2","number":"5555555555554444","exp_month":"1","exp_year":"31","name":"Bo"}',
        '{"id":7,"number":"378282246310005","expiry":"03/2029"}',
        '',
      ]),
    ).toEqual([
      { ok: true, card: { number: '4242424242424242', expiryMonth: 12, expiryYear: 2030, holderName: 'Ada', oldId: 'old_1' } },
      { ok: true, card: { number: '5555555555554444', expiryMonth: 1, expiryYear: 2031, holderName: 'Bo', oldId: 'old_2' } },
      { ok: true, card: { number: '378282246310005', expiryMonth: 3, expiryYear: 2029, holderName: '', oldId: '7' } },
      null,
    ]);
  });

  it('refuses bad records with a reason and the old id, never the card data', () => {
    const results = parseAll('jsonl', [
      '{"id":"a","number":"4242424242424242"',
      '{"id":"b","expiryMonth":1,"expiryYear":2030}',
      '{"id":"c","number":"4242424242424242"}',
      '{"id":"d","number":"4242424242424242","expiry":"soon"}',
      '{"id":"e","number":4242424242424242,"expiryMonth":1,"expiryYear":2030}',
      '[1,2]',
    ]);
    expect(results).toEqual([
      { ok: false, reason: 'record_malformed' },
      { ok: false, reason: 'number_missing', oldId: 'b' },
      { ok: false, reason: 'expiry_missing', oldId: 'c' },
      { ok: false, reason: 'expiry_invalid', oldId: 'd' },
      { ok: false, reason: 'record_malformed', oldId: 'e' },
      { ok: false, reason: 'record_malformed' },
    ]);
    expect(JSON.stringify(results)).not.toContain('4242');
  });
});

describe('CSV', () => {
  it('reads the columns its header names, in any order, with RFC 4180 quoting', () => {
    expect(
      parseAll('csv', [
        'holder_name,expiry,number,id',
        '"Lovelace, Ada",12/30,4242424242424242,old_1',
        '"Say ""Hi""",01/2031,5555555555554444,old_2',
      ]),
    ).toEqual([
      null,
      { ok: true, card: { number: '4242424242424242', expiryMonth: 12, expiryYear: 2030, holderName: 'Lovelace, Ada', oldId: 'old_1' } },
      { ok: true, card: { number: '5555555555554444', expiryMonth: 1, expiryYear: 2031, holderName: 'Say "Hi"', oldId: 'old_2' } },
    ]);
  });

  it('refuses a record whose quotes do not close, and every record after a header without a number or expiry', () => {
    expect(parseAll('csv', ['number,expiryMonth,expiryYear', '"4242424242424242,1,2030'])).toEqual([
      null,
      { ok: false, reason: 'record_malformed' },
    ]);
    expect(parseAll('csv', ['id,name', 'a,b'])).toEqual([
      { ok: false, reason: 'header_missing_columns' },
      { ok: false, reason: 'header_missing_columns' },
    ]);
  });

  it('splits a line into fields', () => {
    expect(splitCsvLine('a,"b,c",,"d""e"')).toEqual(['a', 'b,c', '', 'd"e']);
    expect(splitCsvLine('"open')).toBeNull();
  });
});

describe("Stripe's card export", () => {
  it('reads its JSON records: the card id is the old id, the card name the holder', () => {
    const line = JSON.stringify({
      id: 'cus_JeGmWqYRVUNu44',
      name: 'Stripey McStripe',
      email: 'test@example.com',
      card: { id: 'card_1J1KSb', number: '4242424242424242', exp_month: 9, exp_year: 2031, name: 'S. McStripe', address_zip: '90210' },
    });
    expect(parseAll('stripe', [line])).toEqual([
      { ok: true, card: { number: '4242424242424242', expiryMonth: 9, expiryYear: 2031, holderName: 'S. McStripe', oldId: 'card_1J1KSb' } },
    ]);
  });

  it('reads its CSV, whose columns are named card.number, card.exp_month, …', () => {
    expect(
      parseAll('stripe', [
        'DESCRIPTION,NAME,EMAIL,ID,CARD.EXP_MONTH,CARD.EXP_YEAR,CARD.ID,CARD.NAME,CARD.NUMBER,DEFAULT_SOURCE',
        'User,Stripey,test@example.com,cus_1,9,2031,card_1,,4242424242424242,card_1',
      ]),
    ).toEqual([
      null,
      { ok: true, card: { number: '4242424242424242', expiryMonth: 9, expiryYear: 2031, holderName: 'Stripey', oldId: 'card_1' } },
    ]);
  });
});

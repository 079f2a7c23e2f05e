import { EXPORT_FORMATS } from '@tessera/merchant-data';
import { createRecordParser, createRecordWriter, IMPORT_FORMATS, type ExportedCard, type ImportFormat } from './importFormats';

const CARDS: ExportedCard[] = [
  { id: 'tok.aaaa', number: '4242424242424242', expiryMonth: 1, expiryYear: 2031, holderName: 'Ada Lovelace' },
  { id: 'tok.bbbb', number: '5555555555554444', expiryMonth: 12, expiryYear: 2040, holderName: '' },
  // Quotes, commas and non-ASCII in a holder name survive every format.
  { id: 'tok.cccc', number: '378282246310005', expiryMonth: 7, expiryYear: 2029, holderName: 'O"Brien, Zoë' },
];

function writeAll(format: ImportFormat, cards: readonly ExportedCard[]): string {
  const writer = createRecordWriter(format);
  return writer.header + cards.map((card) => writer.write(card)).join('');
}

function readBack(format: ImportFormat, text: string): ExportedCard[] {
  const parser = createRecordParser(format);
  const cards: ExportedCard[] = [];
  for (const line of text.split('\n')) {
    const parsed = parser.parse(line);
    if (parsed === null) continue;
    if (!parsed.ok) throw new Error(`refused: ${parsed.reason}`);
    const { oldId, ...card } = parsed.card;
    cards.push({ id: oldId, ...card });
  }
  return cards;
}

describe('the export writers', () => {
  it.each(IMPORT_FORMATS)('write %s that the import reads back as the same cards, the token as the old id', (format) => {
    expect(readBack(format, writeAll(format, CARDS))).toEqual(CARDS);
  });

  it('write the documented layouts', () => {
    expect(writeAll('csv', CARDS.slice(0, 2))).toBe(
      'id,number,expiry_month,expiry_year,holder_name\ntok.aaaa,4242424242424242,1,2031,Ada Lovelace\ntok.bbbb,5555555555554444,12,2040,\n',
    );
    expect(JSON.parse(writeAll('jsonl', CARDS.slice(1, 2)))).toEqual({
      id: 'tok.bbbb',
      number: '5555555555554444',
      expiryMonth: 12,
      expiryYear: 2040,
    });
    expect(JSON.parse(writeAll('stripe', CARDS.slice(0, 1)))).toEqual({
      id: 'tok.aaaa',
      card: { id: 'tok.aaaa', number: '4242424242424242', exp_month: 1, exp_year: 2031, name: 'Ada Lovelace' },
    });
  });

  it('cover the formats an export order may name', () => {
    expect([...EXPORT_FORMATS]).toEqual([...IMPORT_FORMATS]);
  });
});

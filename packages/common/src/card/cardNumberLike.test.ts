import fc from 'fast-check';
import { CARD_NUMBER_MASK, findCardNumberRuns, maskCardNumbers, MAX_SEPARATOR_RUN, mayHoldCardNumber } from './cardNumberLike';
import { isLuhnValid } from './luhn';

/** `body` (11-18 digits) completed with the check digit that makes it Luhn-valid. */
function withCheckDigit(body: string): string {
  for (let d = 0; d <= 9; d++) if (isLuhnValid(body + d)) return body + d;
  throw new Error('unreachable');
}

const luhnValidNumber = fc
  .integer({ min: 12, max: 19 })
  .chain((length) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: length - 1, maxLength: length - 1 }))
  .map(withCheckDigit);

const SEPARATORS = [' ', '-', '_', '.', '/', ':', ',', '+', '\t', '\u00a0', '·', '😀'];

/** The number cut into groups anywhere, each cut joined by one separator (mixed ones too). */
const grouped = luhnValidNumber.chain((pan) =>
  fc
    .array(fc.tuple(fc.boolean(), fc.constantFrom(...SEPARATORS)), { minLength: pan.length - 1, maxLength: pan.length - 1 })
    .map((cuts) => ({ pan, text: [...pan].map((d, i) => d + (cuts[i]?.[0] ? cuts[i][1] : '')).join('') })),
);

/**
 * The number cut into groups anywhere (at least one cut), each cut joined by a run of 1 to
 * MAX_SEPARATOR_RUN separators: `4242  4242  4242  4242`, `4242, 4242, …`, `4242 - 4242 …`,
 * `4242-4242--4242-4242`, and any mix.
 */
const separatorRun = fc.array(fc.constantFrom(...SEPARATORS), { minLength: 1, maxLength: MAX_SEPARATOR_RUN }).map((run) => run.join(''));
const spelled = luhnValidNumber.chain((pan) =>
  fc
    .array(fc.option(separatorRun, { nil: undefined }), { minLength: pan.length - 1, maxLength: pan.length - 1 })
    .filter((cuts) => cuts.some((cut) => cut !== undefined))
    .map((cuts) => ({ pan, text: [...pan].map((d, i) => d + (cuts[i] ?? '')).join('') })),
);

/** Text around a number that cannot join it: ends in a letter or starts with one. */
const surrounding = fc.oneof(
  fc.constantFrom('', ' ', 'card ', 'x', 'token=', 'https://', '"'),
  fc.string({ maxLength: 10 }).map((s) => `${s}z`),
);
const after = fc.oneof(
  fc.constantFrom('', ' ', 'y', '.example/charge', '&x=1', '"'),
  fc.string({ maxLength: 10 }).map((s) => `q${s}`),
);

describe('mayHoldCardNumber', () => {
  it.each([
    '4242424242424242',
    'req-4242424242424242',
    'x5555555555554444y',
    '4242-4242-4242-4242',
    '4242.4242.4242.4242',
    '378282246310005',
    // The shapes the red-team review found missed:
    '4242_4242_4242_4242',
    '4242-4242.4242-4242',
    '3782-822463-10005',
    '500000000009',
    // Hidden behind a prefix or inside a longer number.
    'order 94242424242424242',
    '1 4242 4242 4242 4242',
    'https://4242424242424242.example/charge',
    // Two or three separators between groups (issue 22): doubled, comma and space, spaced hyphen.
    '4242  4242  4242  4242',
    '4242, 4242, 4242, 4242',
    '4242 - 4242 - 4242 - 4242',
    '4242-4242--4242-4242',
    '4242--4242--4242--4242',
    '3782 / 822463 / 10005',
    '4242\t\t4242\r\n4242  4242',
    // By design, a longer run is flagged when any 12-19 of its digits pass: here the first twelve.
    '4242424242424241',
  ])('flags %s', (text) => expect(mayHoldCardNumber(text)).toBe(true));

  it.each([
    'req_7f3a9c',
    '550e8400-e29b-41d4-a716-446655440000',
    'order-1700000000001',
    '1111111111111111',
    '424242424243',
    // Four separators in a row are layout between separate numbers, not a spelling of one.
    '4242    4242    4242    4242',
    '2026-11-23T12:51:38.000Z',
    // Addresses are not card numbers, even with 12 digits and a port.
    '192.168.100.200',
    '192.168.100.200:8443',
    '203.100.113.255/32',
    // An X-Forwarded-For list is addresses too.
    '203.100.113.255, 198.151.100.222',
    '10.100.200.250 - 192.168.100.200:8443',
  ])('leaves %s alone', (text) => expect(mayHoldCardNumber(text)).toBe(false));

  it('finds every Luhn-valid 12-19 digit number, in any grouping with any separators, wherever it stands', () => {
    fc.assert(
      fc.property(surrounding, grouped, after, (before, { text }, tail) => {
        expect(mayHoldCardNumber(before + text + tail)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('finds every Luhn-valid 12-19 digit number spelled with runs of up to three separators between its groups', () => {
    fc.assert(
      fc.property(surrounding, spelled, after, (before, { text }, tail) => {
        expect(mayHoldCardNumber(before + text + tail)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('agrees with a plain Luhn check on lone runs of 12-19 digits', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 12, maxLength: 12 }), (digits) => {
        expect(mayHoldCardNumber(`a${digits}b`)).toBe(isLuhnValid(digits));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('maskCardNumbers', () => {
  it('replaces the whole run, separators included, and leaves the rest', () => {
    expect(maskCardNumbers('card 4242_4242_4242_4242 here')).toBe(`card ${CARD_NUMBER_MASK} here`);
    expect(maskCardNumbers('a 3782-822463-10005, b 5555555555554444')).toBe(`a ${CARD_NUMBER_MASK}, b ${CARD_NUMBER_MASK}`);
    expect(maskCardNumbers('listening on 127.0.0.1:8080 status 402')).toBe('listening on 127.0.0.1:8080 status 402');
  });

  it('returns the same string when there is nothing to mask', () => {
    const text = 'x'.repeat(100);
    expect(maskCardNumbers(text)).toBe(text);
  });

  it('never leaves the middle digits of a number it found, nor anything card-number-like', () => {
    fc.assert(
      fc.property(surrounding, grouped, after, (before, { text }, tail) => {
        const masked = maskCardNumbers(before + text + tail);
        expect(mayHoldCardNumber(masked)).toBe(false);
        // The surroundings stay as they were; the number, and so its middle digits, are gone.
        expect(masked).toBe(before + CARD_NUMBER_MASK + tail);
        expect(masked.replace(/\D/g, '')).toBe((before + tail).replace(/\D/g, ''));
      }),
      { numRuns: 2000 },
    );
  });

  it('never leaves the middle digits of a number spelled with runs of up to three separators', () => {
    fc.assert(
      fc.property(surrounding, spelled, after, (before, { text }, tail) => {
        const masked = maskCardNumbers(before + text + tail);
        expect(masked).toBe(before + CARD_NUMBER_MASK + tail);
        // No digit of the number is left, the middle ones above all: only the surroundings' digits remain.
        expect(masked.replace(/\D/g, '')).toBe((before + tail).replace(/\D/g, ''));
        expect(mayHoldCardNumber(masked)).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('leaves nothing card-number-like in any text', () => {
    const digitHeavy = fc.string({ unit: fc.constantFrom(...'0123456789 -_./a'), maxLength: 80 });
    fc.assert(
      fc.property(fc.oneof(digitHeavy, fc.string({ unit: 'binary', maxLength: 80 })), (text) => {
        expect(mayHoldCardNumber(maskCardNumbers(text))).toBe(false);
      }),
      { numRuns: 3000 },
    );
  });

  it('scans long input in linear time', () => {
    const text = '4'.repeat(300_000);
    expect(findCardNumberRuns(text)).toEqual([[0, 300_000]]);
    expect(mayHoldCardNumber('4 '.repeat(100_000))).toBe(true);
    // Twelve to nineteen 1s never pass Luhn: every window of the run is tried, and none is found.
    expect(mayHoldCardNumber('1-'.repeat(100_000))).toBe(false);
  });
});

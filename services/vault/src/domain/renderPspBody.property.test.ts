import fc from 'fast-check';
import { renderPspBody, type CardValues } from './renderPspBody';

/** Property tests: the escaping holds for every holder name, not just the ones someone thought of. */

/** String.prototype.toWellFormed, which the compile target (ES2022) does not declare. */
const wellFormed = (s: string): string => (s as string & { toWellFormed(): string }).toWellFormed();

const card = (holderName: string): CardValues => ({ number: '4242424242424242', expiryMonth: 7, expiryYear: 2031, cvv: '046', holderName });

/** Any Unicode text, lone surrogates included; placeholder look-alikes mixed in on purpose. */
const holderName = fc.oneof(
  fc.string({ unit: 'binary', minLength: 1, maxLength: 200 }),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 50 }),
  fc
    .array(
      fc.constantFrom('[CARD_NUMBER]', '[CARD_CVV]', '"', '\\', '\n', '\u2028', '\u0000', '}', '%', '&', '=', '+', 'é', '😀', '\uD800'),
      {
        minLength: 1,
        maxLength: 12,
      },
    )
    .map((parts) => parts.join('')),
);

describe('renderPspBody properties', () => {
  it('a JSON body with [CARD_HOLDER] always parses, and gives back exactly the holder name', () => {
    fc.assert(
      fc.property(holderName, (name) => {
        const rendered = renderPspBody(
          '{"card":{"name":"[CARD_HOLDER]","number":"[CARD_NUMBER]","cvc":"[CARD_CVV]"}}',
          card(name),
          'application/json',
        );
        const parsed = JSON.parse(rendered);
        expect(parsed).toEqual({ card: { name, number: '4242424242424242', cvc: '046' } });
      }),
      { numRuns: 500 },
    );
  });

  it('the holder name lands in whatever JSON document the merchant wrote, wherever the placeholder sits, leaving the rest untouched', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 }), holderName, (doc, name) => {
        const template = JSON.stringify({ ...doc, holder: '[CARD_HOLDER]', greeting: 'Dear [CARD_HOLDER]!' });
        const parsed = JSON.parse(renderPspBody(template, card(name), 'application/vnd.psp+json; charset=utf-8'));
        expect(parsed.holder).toBe(name);
        expect(parsed.greeting).toBe(`Dear ${name}!`);
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'text/json',
    'application/x-json',
    'text/x-json',
    'application/vnd.api+json',
    'application/problem+json',
    'APPLICATION/VND.PSP.V2+JSON ; charset=UTF-8',
  ])('for %p, a body with [CARD_HOLDER] in a key, a value and mid-string always parses and gives back the holder name', (contentType) => {
    fc.assert(
      fc.property(holderName, (name) => {
        const template = '{"[CARD_HOLDER]":{"name":"[CARD_HOLDER]","note":"to [CARD_HOLDER], ok","cvc":"[CARD_CVV]"}}';
        expect(JSON.parse(renderPspBody(template, card(name), contentType))).toEqual({
          [name]: { name, note: `to ${name}, ok`, cvc: '046' },
        });
      }),
      { numRuns: 200 },
    );
  });

  it('an XML body keeps its structure (no markup from the name) and its text unescapes to the holder name', () => {
    const unescape = (text: string): string =>
      text.replace(/&(amp|lt|gt|quot|apos|#9|#10|#13);/g, (_m, e: string) =>
        e === 'amp'
          ? '&'
          : e === 'lt'
            ? '<'
            : e === 'gt'
              ? '>'
              : e === 'quot'
                ? '"'
                : e === 'apos'
                  ? "'"
                  : String.fromCharCode(Number(e.slice(1))),
      );
    // XML 1.0 has no way to carry these (section 2.2): they arrive as U+FFFD.
    // eslint-disable-next-line no-control-regex -- the control characters XML cannot carry
    const xmlChars = (s: string): string => wellFormed(s).replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '\uFFFD');
    fc.assert(
      fc.property(holderName, (name) => {
        const rendered = renderPspBody('<card name="[CARD_HOLDER]">[CARD_HOLDER]</card>', card(name), 'application/xml');
        const match = /^<card name="([^"<>]*)">([^<>]*)<\/card>$/.exec(rendered);
        expect(match).not.toBeNull();
        expect(unescape(match![1]!)).toBe(xmlChars(name));
        expect(unescape(match![2]!)).toBe(xmlChars(name));
        expect(match![2]!).not.toMatch(/&(?!(amp|lt|gt|quot|apos|#9|#10|#13);)/);
      }),
      { numRuns: 500 },
    );
  });

  it('a form body decodes back to the holder name (lone surrogates as U+FFFD, as any UTF-8 decoder shows them)', () => {
    fc.assert(
      fc.property(holderName, (name) => {
        const rendered = renderPspBody('name=[CARD_HOLDER]&number=[CARD_NUMBER]', card(name), 'application/x-www-form-urlencoded');
        const form = new URLSearchParams(rendered);
        expect(form.get('name')).toBe(wellFormed(name));
        expect(form.get('number')).toBe('4242424242424242');
        expect([...form.keys()]).toEqual(['name', 'number']);
      }),
      { numRuns: 500 },
    );
  });
});

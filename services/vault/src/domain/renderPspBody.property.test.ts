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

import { TesseraError } from '@tessera/common';
import { encodingForContentType, renderPspBody, templateUses, type CardValues } from './renderPspBody';

const values: CardValues = { number: '4242424242424242', expiryMonth: 3, expiryYear: 2031, cvv: '123', holderName: 'Ada Lovelace' };

describe('renderPspBody', () => {
  it('fills every placeholder, with a two-digit month and four-digit year', () => {
    const template = 'n=[CARD_NUMBER] m=[CARD_EXPIRY_MONTH] y=[CARD_EXPIRY_YEAR] c=[CARD_CVV] h=[CARD_HOLDER]';
    expect(renderPspBody(template, values, 'text/plain')).toBe('n=4242424242424242 m=03 y=2031 c=123 h=Ada Lovelace');
  });

  it('fills repeated placeholders each time', () => {
    expect(renderPspBody('[CARD_EXPIRY_MONTH]/[CARD_EXPIRY_MONTH]', { ...values, expiryMonth: 11 }, 'text/plain')).toBe('11/11');
  });

  it.each(['He said "hi"', 'back\\slash\\', 'line\nbreak\r\ttab', 'Zoë Ñúñez 李小龍 👩‍💻', '\u0000\u001f control', '</script>\u2028'])(
    'JSON-escapes a holder name so the body still parses: %p',
    (holderName) => {
      const template = '{"card":{"number":"[CARD_NUMBER]","name":"[CARD_HOLDER]","exp":"[CARD_EXPIRY_MONTH]/[CARD_EXPIRY_YEAR]"}}';
      const body = renderPspBody(template, { ...values, holderName }, 'application/json');
      expect(JSON.parse(body)).toEqual({ card: { number: '4242424242424242', name: holderName, exp: '03/2031' } });
    },
  );

  it.each(['application/json', 'Application/JSON; charset=utf-8', 'application/vnd.api+json', 'application/problem+json ; q=1'])(
    'treats %p as JSON',
    (contentType) => {
      expect(renderPspBody('"[CARD_HOLDER]"', { ...values, holderName: 'a"b' }, contentType)).toBe('"a\\"b"');
    },
  );

  it('form-encodes values for application/x-www-form-urlencoded, spaces as +', () => {
    const holderName = "O'Brien & Sons = 100% café+";
    const body = renderPspBody(
      'number=[CARD_NUMBER]&name=[CARD_HOLDER]&cvc=[CARD_CVV]',
      { ...values, holderName },
      'application/x-www-form-urlencoded; charset=UTF-8',
    );
    expect(body).toBe("number=4242424242424242&name=O'Brien+%26+Sons+%3D+100%25+caf%C3%A9%2B&cvc=123");
    const parsed = new URLSearchParams(body);
    expect(parsed.get('name')).toBe(holderName);
    expect(parsed.get('number')).toBe('4242424242424242');
  });

  it('form-encodes a holder name with a lone surrogate instead of throwing', () => {
    expect(renderPspBody('n=[CARD_HOLDER]', { ...values, holderName: 'a\uD800b' }, 'application/x-www-form-urlencoded')).toBe(
      'n=a%EF%BF%BDb',
    );
  });

  it.each(['text/xml', 'application/xml', '', 'multipart/form-data; boundary=x'])('inserts values raw for %p', (contentType) => {
    expect(renderPspBody('<name>[CARD_HOLDER]</name>', { ...values, holderName: 'A "B" & C\\' }, contentType)).toBe(
      '<name>A "B" & C\\</name>',
    );
  });

  it('leaves unknown bracketed text alone', () => {
    const template = '[CARD_PIN] [card_number] [CARD_NUMBER [ CARD_NUMBER] [] [[CARD_NUMBER]]';
    expect(renderPspBody(template, values, 'text/plain')).toBe(
      '[CARD_PIN] [card_number] [CARD_NUMBER [ CARD_NUMBER] [] [4242424242424242]',
    );
  });

  it('does not substitute inside substituted values', () => {
    const body = renderPspBody('[CARD_HOLDER]|[CARD_NUMBER]', { ...values, holderName: '[CARD_NUMBER][CARD_CVV]' }, 'text/plain');
    expect(body).toBe('[CARD_NUMBER][CARD_CVV]|4242424242424242');
  });

  it('returns a template without placeholders unchanged', () => {
    expect(renderPspBody('{"amount":100}', values, 'application/json')).toBe('{"amount":100}');
  });

  it.each([undefined, ''])('refuses [CARD_CVV] with cvv_unavailable when the CVV is %p', (cvv) => {
    expect(() => renderPspBody('[CARD_CVV]', { ...values, cvv }, 'text/plain')).toThrow(new TesseraError('cvv_unavailable'));
  });

  it('does not need the CVV when the template does not ask for it', () => {
    expect(renderPspBody('[CARD_NUMBER]', { ...values, cvv: undefined }, 'text/plain')).toBe('4242424242424242');
  });

  it.each([undefined, ''])('refuses [CARD_HOLDER] with holder_name_unavailable when the name is %p', (holderName) => {
    let caught: unknown;
    try {
      renderPspBody('[CARD_HOLDER]', { ...values, holderName }, 'application/json');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(TesseraError);
    expect((caught as TesseraError).code).toBe('holder_name_unavailable');
    expect((caught as TesseraError).status).toBe(422);
  });
});

describe('encodingForContentType / templateUses', () => {
  it('classifies media types', () => {
    expect(encodingForContentType('APPLICATION/X-WWW-FORM-URLENCODED')).toBe('form');
    expect(encodingForContentType('application/jsonp')).toBe('raw');
    expect(encodingForContentType('text/json+xml')).toBe('raw');
  });

  it('finds placeholders by exact name', () => {
    expect(templateUses('{"cvc":"[CARD_CVV]"}', 'CARD_CVV')).toBe(true);
    expect(templateUses('{"cvc":"[CARD_CVV"}', 'CARD_CVV')).toBe(false);
  });
});

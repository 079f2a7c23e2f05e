import { TesseraError } from '@tessera/common';
import {
  checkRenderable,
  DEFAULT_RENDER_MAX_BYTES,
  encodingForContentType,
  renderPspBody,
  templateUses,
  type CardValues,
} from './renderPspBody';

const values: CardValues = { number: '4242424242424242', expiryMonth: 3, expiryYear: 2031, cvv: '123', holderName: 'Ada Lovelace' };

describe('renderPspBody', () => {
  it('fills every placeholder, with a two-digit month and four-digit year', () => {
    const template = 'n=[CARD_NUMBER] m=[CARD_EXPIRY_MONTH] y=[CARD_EXPIRY_YEAR] c=[CARD_CVV] h=[CARD_HOLDER]';
    expect(renderPspBody(template, values, 'application/json')).toBe('n=4242424242424242 m=03 y=2031 c=123 h=Ada Lovelace');
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

  it.each([
    'application/json',
    'Application/JSON; charset=utf-8',
    'application/vnd.api+json',
    'application/problem+json ; q=1',
    'text/json',
    'application/x-json',
    'TEXT/X-JSON; charset=utf-8',
  ])('treats %p as JSON', (contentType) => {
    expect(renderPspBody('"[CARD_HOLDER]"', { ...values, holderName: 'a"b' }, contentType)).toBe('"a\\"b"');
  });

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

  it.each(['text/xml', 'application/xml; charset=utf-8', 'application/soap+xml', 'Application/Vnd.Psp+XML'])(
    'escapes the holder name as XML text for %p, in elements and attributes alike',
    (contentType) => {
      const holderName = 'A "B" & C\'s <D>\tE\r\n';
      expect(renderPspBody('<name on="[CARD_HOLDER]">[CARD_HOLDER]</name>', { ...values, holderName }, contentType)).toBe(
        '<name on="A &quot;B&quot; &amp; C&apos;s &lt;D&gt;&#9;E&#13;&#10;">A &quot;B&quot; &amp; C&apos;s &lt;D&gt;&#9;E&#13;&#10;</name>',
      );
    },
  );

  it('shows characters XML 1.0 cannot carry (controls, U+FFFF, lone surrogates) as U+FFFD, keeping surrogate pairs', () => {
    const holderName = 'a\u0000b\u001fc\uffffd\uD800e😀';
    expect(renderPspBody('<n>[CARD_HOLDER]</n>', { ...values, holderName }, 'text/xml')).toBe('<n>a\uFFFDb\uFFFDc\uFFFDd\uFFFDe😀</n>');
  });

  it.each(['multipart/form-data; boundary=x', 'text/plain', '', 'application/octet-stream', 'not a media type'])(
    'refuses [CARD_HOLDER] for %p with 400 placeholder_not_encodable: free text cannot be escaped for it',
    (contentType) => {
      const err = (() => {
        try {
          renderPspBody('--x\r\n\r\n[CARD_HOLDER]\r\n--x--', values, contentType);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(err).toMatchObject({ code: 'placeholder_not_encodable', status: 400, param: 'pspBody' });
    },
  );

  it('refuses a holder name in such a body even when the card has none: the request is at fault either way', () => {
    expect(() => renderPspBody('[CARD_HOLDER]', { ...values, holderName: '' }, 'text/plain')).toThrow(
      expect.objectContaining({ code: 'placeholder_not_encodable' }),
    );
  });

  it.each(['multipart/form-data; boundary=x', 'text/plain', ''])('inserts the digit-only values raw for %p', (contentType) => {
    expect(renderPspBody('[CARD_NUMBER] [CARD_EXPIRY_MONTH]/[CARD_EXPIRY_YEAR] [CARD_CVV]', values, contentType)).toBe(
      '4242424242424242 03/2031 123',
    );
  });

  it('leaves unknown bracketed text alone', () => {
    const template = '[CARD_PIN] [card_number] [CARD_NUMBER [ CARD_NUMBER] [] [[CARD_NUMBER]]';
    expect(renderPspBody(template, values, 'text/plain')).toBe(
      '[CARD_PIN] [card_number] [CARD_NUMBER [ CARD_NUMBER] [] [4242424242424242]',
    );
  });

  it('does not substitute inside substituted values', () => {
    const body = renderPspBody('[CARD_HOLDER]|[CARD_NUMBER]', { ...values, holderName: '[CARD_NUMBER][CARD_CVV]' }, 'application/json');
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
    expect(encodingForContentType('text/json+xml')).toBe('xml');
    expect(encodingForContentType('application/xml-dtd')).toBe('raw');
    expect(encodingForContentType('json')).toBe('raw');
  });

  it('finds placeholders by exact name', () => {
    expect(templateUses('{"cvc":"[CARD_CVV]"}', 'CARD_CVV')).toBe(true);
    expect(templateUses('{"cvc":"[CARD_CVV"}', 'CARD_CVV')).toBe(false);
  });
});

describe('the rendered size cap', () => {
  const wide = { ...values, holderName: '\uffff'.repeat(200) };
  // 1800 bytes once form-encoded (%EF%BF%BF per character).
  const template = (copies: number) => `n=[CARD_NUMBER]&h=${'[CARD_HOLDER]'.repeat(copies)}`;
  const FORM = 'application/x-www-form-urlencoded';

  it('renders a body of exactly the cap', () => {
    const size = Buffer.byteLength(renderPspBody(template(3), wide, FORM));
    expect(size).toBe(2 + 16 + 3 + 3 * 1800);
    expect(Buffer.byteLength(renderPspBody(template(3), wide, FORM, size))).toBe(size);
  });

  it('refuses one byte over the cap with 422 rendered_body_too_large on pspBody', () => {
    const size = Buffer.byteLength(renderPspBody(template(3), wide, FORM));
    expect(() => renderPspBody(template(3), wide, FORM, size - 1)).toThrow(
      expect.objectContaining({ code: 'rendered_body_too_large', status: 422, param: 'pspBody' }),
    );
  });

  it('counts UTF-8 bytes, not characters', () => {
    expect(() => renderPspBody('é[CARD_HOLDER]', { ...values, holderName: 'ü' }, 'application/json', 3)).toThrow(
      expect.objectContaining({ code: 'rendered_body_too_large' }),
    );
    expect(renderPspBody('é[CARD_HOLDER]', { ...values, holderName: 'ü' }, 'application/json', 4)).toBe('éü');
  });

  it('refuses the red team body (975 KB of [CARD_HOLDER], 135 MB once filled) under the default 2 MiB cap, without building it', () => {
    const attack = '[CARD_HOLDER]'.repeat(75_000);
    const heapBefore = process.memoryUsage().heapUsed;
    expect(() => renderPspBody(attack, wide, FORM)).toThrow(expect.objectContaining({ code: 'rendered_body_too_large' }));
    // What is built before the refusal is bounded by the cap (2 MiB of pieces), not by the 135 MB result.
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(16 * DEFAULT_RENDER_MAX_BYTES);
  });

  it('checkRenderable raises what the render would, without a body', () => {
    expect(() => checkRenderable(template(2000), wide, FORM, DEFAULT_RENDER_MAX_BYTES)).toThrow(
      expect.objectContaining({ code: 'rendered_body_too_large' }),
    );
    expect(() => checkRenderable('[CARD_HOLDER]', { ...values, holderName: '' }, 'application/json', 100)).toThrow(
      expect.objectContaining({ code: 'holder_name_unavailable' }),
    );
    expect(() => checkRenderable(template(1), wide, FORM, DEFAULT_RENDER_MAX_BYTES)).not.toThrow();
  });
});

import { maskHolderName, maskPan, previewPspBody } from './previewPspBody';
import type { CardValues } from './renderPspBody';

const values: CardValues = { number: '4242424242424242', expiryMonth: 3, expiryYear: 2031, cvv: '123', holderName: 'Ada Lovelace' };

describe('previewPspBody', () => {
  it('fills every placeholder with a masked value and never with the PAN, CVV or holder name', () => {
    const template = 'n=[CARD_NUMBER] m=[CARD_EXPIRY_MONTH] y=[CARD_EXPIRY_YEAR] c=[CARD_CVV] h=[CARD_HOLDER]';
    const preview = previewPspBody(template, values, 'application/json');
    expect(preview.body).toBe('n=424242******4242 m=03 y=2031 c=*** h=A*** L***');
    expect(preview.body).not.toContain('4242424242424242');
    expect(preview.body).not.toContain('123');
    expect(preview.body).not.toContain('Lovelace');
    expect(preview.filled).toEqual(['[CARD_NUMBER]', '[CARD_EXPIRY_MONTH]', '[CARD_EXPIRY_YEAR]', '[CARD_CVV]', '[CARD_HOLDER]']);
    expect(preview.unfillable).toEqual([]);
    expect(preview.unknown).toEqual([]);
  });

  it('lists unknown upper-case bracket text once each and leaves it in the body', () => {
    const preview = previewPspBody('[CARD_NUMBR] [FOO] [FOO] card[number]=[CARD_NUMBER]', values, 'text/plain');
    expect(preview.unknown).toEqual(['[CARD_NUMBR]', '[FOO]']);
    expect(preview.body).toBe('[CARD_NUMBR] [FOO] [FOO] card[number]=424242******4242');
  });

  it('lists a CVV that is gone and a holder name never given as unfillable, with the error a render would raise', () => {
    const preview = previewPspBody(
      '[CARD_CVV]/[CARD_HOLDER]/[CARD_CVV]',
      { ...values, cvv: undefined, holderName: '' },
      'application/json',
    );
    expect(preview.unfillable).toEqual([
      { placeholder: '[CARD_CVV]', code: 'cvv_unavailable' },
      { placeholder: '[CARD_HOLDER]', code: 'holder_name_unavailable' },
    ]);
    expect(preview.body).toBe('[CARD_CVV]/[CARD_HOLDER]/[CARD_CVV]');
    expect(preview.filled).toEqual([]);
  });

  it('encodes masked values for the content type, so a JSON body still parses and a form body stays a form', () => {
    const json = previewPspBody('{"name":"[CARD_HOLDER]"}', { ...values, holderName: '"Q" Smith' }, 'application/json');
    expect(JSON.parse(json.body)).toEqual({ name: '"*** S***' });
    const form = previewPspBody('name=[CARD_HOLDER]', values, 'application/x-www-form-urlencoded');
    expect(form.body).toBe('name=A***+L***');
  });

  it('lists [CARD_HOLDER] in a body of unknown type (multipart) as unfillable with placeholder_not_encodable, like a render', () => {
    const preview = previewPspBody('--x\r\n\r\n[CARD_HOLDER] [CARD_NUMBER]', values, 'multipart/form-data; boundary=x');
    expect(preview.unfillable).toEqual([{ placeholder: '[CARD_HOLDER]', code: 'placeholder_not_encodable' }]);
    expect(preview.body).toBe('--x\r\n\r\n[CARD_HOLDER] 424242******4242');
  });

  it('XML-escapes masked values for an XML body', () => {
    expect(previewPspBody('<n>[CARD_HOLDER]</n>', { ...values, holderName: '<Q> Smith' }, 'text/xml').body).toBe('<n>&lt;*** S***</n>');
  });
});

describe('maskPan', () => {
  it.each([
    ['4242424242424242', '424242******4242'],
    ['378282246310005', '378282*****0005'],
    ['123456789012', '123456**9012'],
  ])('shows only the first six and last four digits of %s', (pan, masked) => {
    expect(maskPan(pan)).toBe(masked);
  });
});

describe('maskHolderName', () => {
  it('keeps only the initial of each word', () => {
    expect(maskHolderName('  Zoë  Ñúñez ')).toBe('Z*** Ñ***');
  });
});

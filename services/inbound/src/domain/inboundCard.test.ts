import { TesseraError } from '@tessera/common';
import { findCardData, parseRouteDocument } from '@tessera/routes';
import { aliasFormatsOf, aliasReplacements, cardOfPlaces, expiryOf } from './inboundCard';

const route = parseRouteDocument({
  id: 'checkout',
  kind: 'inbound',
  mode: 'test',
  inbound: { path: '/checkout', upstream: 'https://shop.example/checkout' },
  filters: [
    { location: 'form', field: 'number', store: 'number', aliasFormat: 'card_bin_last4' },
    { location: 'form', field: 'exp', store: 'expiry' },
    { location: 'form', field: 'month', store: 'expiry_month' },
    { location: 'form', field: 'year', store: 'expiry_year' },
    { location: 'form', field: 'cvc', store: 'cvv', aliasFormat: 'uuid' },
    { location: 'form', field: 'name', store: 'holder' },
  ],
});
const now = new Date('2026-11-26T12:00:00Z');
const placesOf = (form: Record<string, string | string[]>) => {
  const body = new URLSearchParams(
    Object.entries(form).flatMap(([k, v]): [string, string][] => (Array.isArray(v) ? v.map((x): [string, string] => [k, x]) : [[k, v]])),
  ).toString();
  return findCardData({ contentType: 'application/x-www-form-urlencoded', body }, route.filters);
};
const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err instanceof TesseraError ? err.code : 'not a TesseraError';
  }
};

describe('one card per request', () => {
  it('groups number, expiry, CVV and holder as the filters name them, checked as the vault checks them', () => {
    expect(cardOfPlaces(placesOf({ number: '4242 4242 4242 4242', exp: '12/29', cvc: '046', name: 'Ada' }), 'test', now)).toMatchObject({
      number: '4242424242424242',
      expiryMonth: 12,
      expiryYear: 2029,
      cvv: '046',
      holderName: 'Ada',
      brand: 'visa',
    });
    expect(cardOfPlaces(placesOf({ number: '4242424242424242', month: '3', year: '2030' }), 'test', now)).toMatchObject({
      expiryMonth: 3,
      expiryYear: 2030,
    });
  });

  it('holds no card when no filter found a number (the request passes through)', () => {
    expect(cardOfPlaces(placesOf({ exp: '12/29', name: 'Ada' }), 'test', now)).toBeUndefined();
    expect(cardOfPlaces(placesOf({ number: '' }), 'test', now)).toBeUndefined();
  });

  it('takes one number named twice as one card, and refuses two different numbers', () => {
    expect(cardOfPlaces(placesOf({ number: ['4242424242424242', '4242 4242 4242 4242'], exp: '12/29' }), 'test', now)?.number).toBe(
      '4242424242424242',
    );
    expect(codeOf(() => cardOfPlaces(placesOf({ number: ['4242424242424242', '5555555555554444'], exp: '12/29' }), 'test', now))).toBe(
      'multiple_cards',
    );
  });

  it('refuses a card without an expiry, a number that is no card, and a live card on a test route', () => {
    expect(codeOf(() => cardOfPlaces(placesOf({ number: '4242424242424242' }), 'test', now))).toBe('card_expiry_missing');
    expect(codeOf(() => cardOfPlaces(placesOf({ number: '4242424242424241', exp: '12/29' }), 'test', now))).toBe('card_number_invalid');
    expect(codeOf(() => cardOfPlaces(placesOf({ number: '4111111111111111', exp: '12/29' }), 'test', now))).toBe('live_card_in_test_mode');
    expect(codeOf(() => cardOfPlaces(placesOf({ number: '4242424242424242', exp: 'soon' }), 'test', now))).toBe('parameter_invalid');
  });

  it('reads the expiry spellings card forms use', () => {
    expect(expiryOf('12/29', undefined, undefined)).toEqual({ month: 12, year: 2029 });
    expect(expiryOf('1 / 2031', undefined, undefined)).toEqual({ month: 1, year: 2031 });
    expect(expiryOf('0430', undefined, undefined)).toEqual({ month: 4, year: 2030 });
    expect(expiryOf(undefined, '7', '31')).toEqual({ month: 7, year: 2031 });
    expect(expiryOf(undefined, '7', undefined)).toBeUndefined();
  });

  it('puts an alias of each filter’s format in the number’s and the CVV’s places, and leaves expiry and holder', () => {
    const places = placesOf({ number: '4242424242424242', exp: '12/29', cvc: '046', name: 'Ada' });
    expect(aliasFormatsOf(places).sort()).toEqual(['card_bin_last4', 'uuid']);
    const replacements = aliasReplacements(places, 'tok.x', { card_bin_last4: '4242421234564242', uuid: 'u-u-i-d' });
    expect(replacements.map((r) => [r.place.store, r.text])).toEqual([
      ['number', '4242421234564242'],
      ['cvv', 'u-u-i-d'],
    ]);
    expect(codeOf(() => aliasReplacements(places, 'tok.x', {}))).toBe('internal_error');
  });
});

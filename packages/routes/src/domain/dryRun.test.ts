import { findCardNumberRuns } from '@tessera/common';
import { dryRunRoute } from './dryRun';
import { parseRouteDocument, type RouteDocumentInput } from './routeDocument';

const inbound = (change: Partial<RouteDocumentInput> = {}) =>
  parseRouteDocument({
    id: 'checkout',
    kind: 'inbound',
    mode: 'test',
    inbound: { path: '/checkout', upstream: 'https://shop.example/checkout' },
    filters: [
      { location: 'json', pointer: '/card/number', store: 'number', aliasFormat: 'card_bin_last4' },
      { location: 'json', pointer: '/card/cvc', store: 'cvv' },
      { location: 'json', pointer: '/card/exp', store: 'expiry' },
    ],
    ...change,
  });

const SAMPLE = JSON.stringify({ card: { number: '4242 4242 4242 4242', cvc: '123', exp: '12/34' }, note: 'thanks' });

describe('dry run', () => {
  it('shows an inbound request with placeholder aliases and what is stored, masked, never the number', () => {
    const result = dryRunRoute(inbound(), { contentType: 'application/json', body: SAMPLE });
    expect(result).toMatchObject({ outcome: 'forwarded', unmatchedCardData: 0 });
    expect(result.places).toEqual([
      { filterIndex: 0, store: 'number', value: '424242******4242', becomes: '424242XXXXXX4242' },
      { filterIndex: 1, store: 'cvv', value: '***', becomes: 'tok.dry_run_placeholder' },
      { filterIndex: 2, store: 'expiry', value: '12/34', becomes: 'unchanged' },
    ]);
    expect(JSON.parse(result.body)).toEqual({
      card: { number: '424242XXXXXX4242', cvc: 'tok.dry_run_placeholder', exp: '12/34' },
      note: 'thanks',
    });
    expect(JSON.stringify(result)).not.toMatch(/4242 ?4242 ?4242 ?4242|\b123\b/);
  });

  it('says a request with card data in an unnamed place is refused, or shows it redacted', () => {
    const body = JSON.stringify({ card: { number: '4242424242424242' }, memo: 'backup card 5555-5555-5555-4444' });
    const refused = dryRunRoute(inbound(), { contentType: 'application/json', body });
    expect(refused).toMatchObject({ outcome: 'refused', unmatchedCardData: 1 });
    expect(findCardNumberRuns(JSON.stringify(refused))).toEqual([]);
    const redacted = dryRunRoute(inbound({ unmatchedCardData: 'redact' }), { contentType: 'application/json', body });
    expect(redacted.outcome).toBe('forwarded');
    expect(JSON.parse(redacted.body)).toMatchObject({ memo: 'backup card [redacted]' });
  });

  it('shows an outbound request with card data placeholders where the aliases are', () => {
    const route = parseRouteDocument({
      id: 'psp',
      kind: 'outbound',
      mode: 'test',
      outbound: { hosts: ['api.psp.example'] },
      filters: [
        { location: 'form', field: 'card[number]', store: 'number' },
        { location: 'form', field: 'card[cvc]', store: 'cvv' },
      ],
    });
    const result = dryRunRoute(route, {
      contentType: 'application/x-www-form-urlencoded',
      body: 'amount=100&card%5Bnumber%5D=4242421234564242&card%5Bcvc%5D=tok.abcdefghijklmnop',
    });
    expect(result.places.map((p) => [p.store, p.value, p.becomes])).toEqual([
      ['number', '424242******4242', '[CARD_NUMBER]'],
      ['cvv', 'tok.abcdefghijklmnop', '[CARD_CVV]'],
    ]);
    expect(result.body).toBe('amount=100&card%5Bnumber%5D=%5BCARD_NUMBER%5D&card%5Bcvc%5D=%5BCARD_CVV%5D');
  });
});

describe('dry run: one card per request', () => {
  it('shows a request with two different card numbers as refused, as the inbound service answers it', () => {
    const route = parseRouteDocument({
      id: 'two',
      kind: 'inbound',
      mode: 'test',
      inbound: { path: '/two', upstream: 'https://shop.example/two' },
      filters: [{ location: 'form', field: 'n', store: 'number' }],
    });
    const form = { contentType: 'application/x-www-form-urlencoded', body: 'n=4242424242424242&n=5555555555554444' };
    expect(dryRunRoute(route, form).outcome).toBe('refused');
    const same = { contentType: 'application/x-www-form-urlencoded', body: 'n=4242424242424242&n=4242+4242+4242+4242' };
    expect(dryRunRoute(route, same).outcome).toBe('forwarded');
  });
});

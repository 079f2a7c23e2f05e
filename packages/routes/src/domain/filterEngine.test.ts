import fc from 'fast-check';
import { isLuhnValid } from '@tessera/common';
import {
  findAliasCandidates,
  findCardData,
  findUnmatchedCardData,
  redactUnmatchedCardData,
  rewriteBody,
  type RouteRequest,
} from './filterEngine';
import { parseRouteDocument, type RouteFilter, type RouteFilterInput } from './routeDocument';

const JSON_TYPE = 'application/json; charset=utf-8';
const FORM_TYPE = 'application/x-www-form-urlencoded';

/** Filters as a route document would have them, defaults applied. */
function filters(...input: RouteFilterInput[]): RouteFilter[] {
  return parseRouteDocument({
    id: 'r',
    kind: 'outbound',
    mode: 'test',
    outbound: { hosts: ['api.psp.example'] },
    filters: input,
  }).filters;
}

/** A Luhn-valid number of `length` digits, not starting with 0 (so it is a JSON number too). */
const cardNumber = fc
  .tuple(fc.integer({ min: 1, max: 9 }), fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 10, maxLength: 17 }))
  .map(([first, rest]) => {
    const body = [first, ...rest].join('');
    for (let check = 0; check <= 9; check++) if (isLuhnValid(body + check)) return body + check;
    throw new Error('unreachable');
  });

/** The number as a person or a form might write it: groups joined by one space or hyphen. */
const spelled = fc
  .tuple(cardNumber, fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 8 }), fc.constantFrom(' ', '-', ''))
  .map(([digits, groups, separator]) => {
    const parts: string[] = [];
    let i = 0;
    for (const size of groups) {
      if (i >= digits.length) break;
      parts.push(digits.slice(i, i + size));
      i += size;
    }
    if (i < digits.length) parts.push(digits.slice(i));
    return parts.join(separator);
  });

/** Text that cannot hold a card number: letters, punctuation and short digit runs. */
const filler = fc.stringMatching(/^[a-z .,!?]{0,12}(?:[0-9]{1,4}[a-z .,]{1,6}){0,2}$/);

describe('findCardData (inbound)', () => {
  it('finds the values a JSON pointer and a form field name, and card numbers anywhere for a text filter', () => {
    const json = findCardData(
      { contentType: JSON_TYPE, body: '{"card":{"number":"4242 4242 4242 4242","cvc":123},"items":[1]}' },
      filters({ location: 'json', pointer: '/card/number', store: 'number' }, { location: 'json', pointer: '/card/cvc', store: 'cvv' }),
    );
    expect(json.map((p) => [p.store, p.value, p.segmentKind])).toEqual([
      ['number', '4242 4242 4242 4242', 'json-string'],
      ['cvv', '123', 'json-number'],
    ]);

    const form = findCardData(
      { contentType: FORM_TYPE, body: 'card%5Bnumber%5D=4242+4242+4242+4242&card%5Bcvc%5D=123' },
      filters({ location: 'form', field: 'card[number]', store: 'number' }),
    );
    expect(form.map((p) => p.value)).toEqual(['4242 4242 4242 4242']);

    const text = findCardData(
      { contentType: 'text/plain', body: 'pay with 5555-5555-5555-4444 please, order 12345' },
      filters({ location: 'text', pattern: 'card_number', store: 'number' }),
    );
    expect(text.map((p) => p.value)).toEqual(['5555555555554444']);
  });

  it('does not take a run that is not Luhn-valid, or that continues past 19 digits, as a card number', () => {
    const found = findCardData(
      { contentType: 'text/plain', body: 'ref 4242424242424241 and 4242 4242 4242 4242 4242' },
      filters({ location: 'text', pattern: 'card_number', store: 'number' }),
    );
    expect(found).toEqual([]);
  });
});

describe('rewriteBody', () => {
  it('keeps a JSON body valid and every other value as it was, whatever the alias', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), cardNumber, fc.string(), fc.boolean(), (rest, number, alias, asNumber) => {
        const document = { ...rest, card: { number: asNumber ? Number(number) : number } };
        const request: RouteRequest = { contentType: 'application/json', body: JSON.stringify(document, null, 1) };
        const places = findCardData(request, filters({ location: 'json', pointer: '/card/number', store: 'number' }));
        expect(places).toHaveLength(1);
        const rewritten = JSON.parse(rewriteBody(request, [{ place: places[0]!, text: alias }])) as Record<string, unknown>;
        expect((rewritten.card as { number: unknown }).number).toEqual(asNumber && /^(0|[1-9]\d*)$/.test(alias) ? Number(alias) : alias);
        expect({ ...rewritten, card: undefined }).toEqual(JSON.parse(JSON.stringify({ ...document, card: undefined })));
      }),
    );
  });

  it('keeps a form body valid and every other field as it was, whatever the alias', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string(), fc.string()), { maxLength: 6 }), spelled, fc.string(), (rest, number, alias) => {
        const others = rest.filter(([name]) => name !== 'cc');
        const params = new URLSearchParams([...others, ['cc', number]]);
        const request: RouteRequest = { contentType: FORM_TYPE, body: params.toString() };
        const places = findCardData(request, filters({ location: 'form', field: 'cc', store: 'number' }));
        const rewritten = new URLSearchParams(
          rewriteBody(
            request,
            places.map((place) => ({ place, text: alias })),
          ),
        );
        expect([...rewritten]).toEqual([...others, ['cc', alias]]);
      }),
    );
  });

  it('keeps a JSON body valid when a text filter replaces card numbers inside its strings and numbers', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(filler, spelled, cardNumber.map(Number)), { minLength: 1, maxLength: 5 }),
        fc.string(),
        (values, alias) => {
          const request: RouteRequest = { contentType: JSON_TYPE, body: JSON.stringify({ values, note: values.join(' / ') }) };
          const places = findCardData(request, filters({ location: 'text', pattern: 'card_number', store: 'number' }));
          const rewritten = rewriteBody(
            request,
            places.map((place) => ({ place, text: alias })),
          );
          expect(() => JSON.parse(rewritten) as unknown).not.toThrow();
        },
      ),
    );
  });

  it('puts an alias with a leading zero back into a JSON number as a string, so the body stays JSON', () => {
    const request: RouteRequest = { contentType: JSON_TYPE, body: '{"n":4242424242424242}' };
    const places = findCardData(request, filters({ location: 'text', pattern: 'card_number', store: 'number' }));
    expect(rewriteBody(request, [{ place: places[0]!, text: '0042' }])).toBe('{"n":"0042"}');
    expect(rewriteBody(request, [{ place: places[0]!, text: '0' }])).toBe('{"n":0}');
  });

  it('replaces a number inside a JSON string written with escapes, and leaves the escapes around it', () => {
    const request = { contentType: JSON_TYPE, body: '{"note":"card \\u0034242424242424242 \\"ok\\""}' };
    const places = findCardData(request, filters({ location: 'text', pattern: 'card_number', store: 'number' }));
    expect(places.map((p) => p.value)).toEqual(['4242424242424242']);
    expect(JSON.parse(rewriteBody(request, [{ place: places[0]!, text: 'tok.abc' }]))).toEqual({ note: 'card tok.abc "ok"' });
  });
});

describe('findUnmatchedCardData', () => {
  /** The spellings a client might send the same number in, each as a request. */
  const spellings = (number: string, grouped: string): RouteRequest[] => [
    { contentType: 'text/plain', body: `number: ${grouped}.` },
    { contentType: JSON_TYPE, body: JSON.stringify({ note: grouped }) },
    { contentType: JSON_TYPE, body: `{"n":${number}}` },
    { contentType: JSON_TYPE, body: `{"n":"${[...number].map((d) => `\\u003${d}`).join('')}"}` },
    { contentType: JSON_TYPE, body: `{"n":["${number.slice(0, 4)}","${number.slice(4, 8)}","${number.slice(8)}"]}` },
    { contentType: FORM_TYPE, body: new URLSearchParams({ note: grouped }).toString() },
    { contentType: FORM_TYPE, body: `n=${[...number].map((d) => `%3${d}`).join('')}` },
    { contentType: FORM_TYPE, body: `n=${encodeURIComponent(JSON.stringify({ pan: grouped }))}` },
    { contentType: 'text/plain', body: `pan=${encodeURIComponent(grouped).replace(/%20/g, '%20')}` },
    { contentType: 'text/plain', body: `{"pan":"${[...number].map((d) => `\\u003${d}`).join('')}"}` },
  ];

  it('finds a card number in every spelling, in every kind of body', () => {
    fc.assert(
      fc.property(cardNumber, spelled, (number, grouped) => {
        for (const request of spellings(number, grouped)) {
          expect({ body: request.body, found: findUnmatchedCardData(request, []).length > 0 }).toEqual({ body: request.body, found: true });
        }
      }),
    );
  });

  it('does not count what a filter names', () => {
    const request = { contentType: JSON_TYPE, body: '{"card":{"number":"4242424242424242"},"other":"5555555555554444"}' };
    const places = findCardData(request, filters({ location: 'json', pointer: '/card/number', store: 'number' }));
    const unmatched = findUnmatchedCardData(request, places);
    expect(unmatched.map((r) => request.body.slice(r.start, r.end))).toEqual(['5555555555554444']);
  });
});

describe('redactUnmatchedCardData', () => {
  const body = fc.oneof(
    fc.array(fc.oneof(filler, spelled), { maxLength: 6 }).map((parts) => ({ contentType: 'text/plain', body: parts.join(' ') })),
    fc
      .dictionary(filler, fc.oneof(filler, spelled, cardNumber.map(Number), fc.array(fc.oneof(spelled, filler), { maxLength: 4 })))
      .map((value) => ({
        contentType: JSON_TYPE,
        body: JSON.stringify(value),
      })),
    fc.array(fc.tuple(filler, fc.oneof(filler, spelled)), { maxLength: 5 }).map((pairs) => ({
      contentType: FORM_TYPE,
      body: new URLSearchParams(pairs).toString(),
    })),
  );

  it('leaves no Luhn-valid run of 12-19 digits in any spelling, and the body in its encoding', () => {
    fc.assert(
      fc.property(body, (request) => {
        const result = redactUnmatchedCardData(request, []);
        expect(result).toBeDefined();
        const redacted = { ...request, body: result!.body };
        expect(findUnmatchedCardData(redacted, [])).toEqual([]);
        if (request.contentType === JSON_TYPE) expect(() => JSON.parse(redacted.body) as unknown).not.toThrow();
        if (request.contentType === FORM_TYPE) expect(result!.body.split('&').every((c) => !/%(?![0-9A-F]{2})/i.test(c))).toBe(true);
      }),
    );
  });

  it('keeps the places a filter names and what is not card data', () => {
    const request = {
      contentType: JSON_TYPE,
      body: '{"card":{"number":"4242424242424242"},"note":"call 5555 5555 5555 4444 today","qty":2}',
    };
    const result = redactUnmatchedCardData(request, filters({ location: 'json', pointer: '/card/number', store: 'number' }));
    expect(JSON.parse(result!.body)).toEqual({ card: { number: '4242424242424242' }, note: 'call [redacted] today', qty: 2 });
    expect(result!.redacted).toBe(1);
  });
});

describe('findAliasCandidates (outbound)', () => {
  it('takes the value a pointer or field names, and looks for the alias format in text', () => {
    const request = {
      contentType: JSON_TYPE,
      body: '{"source":"tok.abcdefghijklmnop1234","cvc":"tok.abcdefghijklmnop1234","memo":"ref 550e8400-e29b-41d4-a716-446655440000"}',
    };
    const found = findAliasCandidates(
      request,
      filters(
        { location: 'json', pointer: '/source', store: 'number' },
        { location: 'json', pointer: '/cvc', store: 'cvv' },
        { location: 'text', pattern: 'card_number', store: 'number', aliasFormat: 'uuid' },
      ),
    );
    expect(found.map((p) => [p.store, p.value])).toEqual([
      ['number', 'tok.abcdefghijklmnop1234'],
      ['cvv', 'tok.abcdefghijklmnop1234'],
      ['number', '550e8400-e29b-41d4-a716-446655440000'],
    ]);
    const rendered = rewriteBody(request, [
      { place: found[0]!, text: '4242424242424242' },
      { place: found[1]!, text: '123' },
    ]);
    expect(JSON.parse(rendered)).toMatchObject({ source: '4242424242424242', cvc: '123' });
  });

  it('finds a UUID alias whole even when its digits hold a Luhn-valid run a card_last4 filter listed first would take', () => {
    // 12345678-1236 is 12 digits with one hyphen: a card-number-like run, and Luhn-valid.
    const uuid = '12345678-1236-abcd-8def-0123456789ab';
    expect(isLuhnValid('123456781236')).toBe(true);
    const found = findAliasCandidates(
      { contentType: JSON_TYPE, body: JSON.stringify({ memo: uuid }) },
      filters(
        { location: 'text', pattern: 'card_number', store: 'number', aliasFormat: 'card_last4' },
        { location: 'text', pattern: 'card_number', store: 'number', aliasFormat: 'uuid' },
      ),
    );
    expect(found.map((p) => [p.aliasFormat, p.value])).toEqual([['uuid', uuid]]);
  });
});

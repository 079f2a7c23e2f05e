import { parseRouteFile, RouteDocumentError } from './routeDocument';

const INBOUND_YAML = `
id: inbound-checkout
kind: inbound
mode: test
inbound:
  path: /checkout
  upstream: https://shop.example/checkout
filters:
  - { location: json, pointer: /card/number, store: number, aliasFormat: card_bin_last4 }
  - { location: form, field: "card[cvc]", store: cvv }
`;

describe('route documents', () => {
  it('reads a YAML route with its defaults: token aliases, unmatched card data refused', () => {
    const [route] = parseRouteFile(INBOUND_YAML);
    expect(route).toMatchObject({
      id: 'inbound-checkout',
      kind: 'inbound',
      unmatchedCardData: 'refuse',
      filters: [{ aliasFormat: 'card_bin_last4' }, { location: 'form', field: 'card[cvc]', aliasFormat: 'token' }],
    });
  });

  it('reads JSON, a list, { routes: [...] } and several YAML documents alike', () => {
    const outbound = {
      id: 'stripe',
      kind: 'outbound',
      mode: 'test',
      outbound: { hosts: ['api.stripe.com'] },
      filters: [{ location: 'text', pattern: 'card_number', store: 'number' }],
    };
    expect(parseRouteFile(JSON.stringify(outbound)).map((r) => r.id)).toEqual(['stripe']);
    expect(parseRouteFile(JSON.stringify({ routes: [outbound, { ...outbound, id: 'adyen' }] })).map((r) => r.id)).toEqual([
      'stripe',
      'adyen',
    ]);
    expect(parseRouteFile(`${INBOUND_YAML}\n---\n${JSON.stringify(outbound)}`).map((r) => r.id)).toEqual(['inbound-checkout', 'stripe']);
  });

  it.each([
    ['kind: sideways', /^kind: "kind" must be inbound or outbound\.$/],
    ['pointer: card/number', /^filters\[0\]\.pointer: A JSON pointer is "\/"/],
    ['upstream: ftp://shop.example/', /^inbound\.upstream: "upstream" must be an http\(s\) URL/],
    [
      'aliasFormat: card_bin_last4 }\n  - { location: text, pattern: card_number, store: cvv',
      /^filters\[1\].store: A text filter finds card numbers/,
    ],
    ['extra: 1', /Unrecognized key/],
  ])('refuses a document with %s, saying where', (change, message) => {
    const [key] = change.split(':');
    const text =
      key === 'kind'
        ? INBOUND_YAML.replace('kind: inbound', change)
        : key === 'pointer'
          ? INBOUND_YAML.replace('pointer: /card/number', change)
          : key === 'upstream'
            ? INBOUND_YAML.replace('upstream: https://shop.example/checkout', change)
            : key === 'aliasFormat'
              ? INBOUND_YAML.replace('aliasFormat: card_bin_last4 }', `${change} }`)
              : `${INBOUND_YAML}${change}\n`;
    expect(() => parseRouteFile(text)).toThrow(RouteDocumentError);
    expect(() => parseRouteFile(text)).toThrow(message);
  });

  it('refuses a live inbound route to an http upstream, an inbound route without inbound, and a repeated id', () => {
    expect(() => parseRouteFile(INBOUND_YAML.replace('mode: test', 'mode: live').replace('https://', 'http://'))).toThrow(/https only/);
    expect(() => parseRouteFile(INBOUND_YAML.replace(/inbound:\n {2}path.*\n.*\n/, ''))).toThrow(/has "inbound"/);
    expect(() => parseRouteFile(`${INBOUND_YAML}\n---\n${INBOUND_YAML}`)).toThrow(/appears twice/);
    expect(() => parseRouteFile('')).toThrow(/no route/);
    expect(() => parseRouteFile('{ not: [yaml')).toThrow(/not YAML or JSON/);
  });
});

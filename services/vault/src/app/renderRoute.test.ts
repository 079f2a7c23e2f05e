import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { useRedisServer } from '@tessera/test-support';
import type { RouteDocumentInput, RouteFilterInput } from '@tessera/routes';
import { aCard, anEmptyRedisCardStore, aVault, codeOf, keyRingEntry, keyRingOf, readRecord } from '../test/builders';
import { MerchantKeyRings } from './merchantKeys';
import { MAX_ROUTE_CANDIDATES, renderRoute } from './renderRoute';

jest.setTimeout(20_000);

const db = useRedisServer((url) => new Redis(url));

const VISA = '4242424242424242';
const MASTERCARD = '5555555555554444';
const A = { merchantId: 'merchant_a', mode: 'test' };
const FORM = 'application/x-www-form-urlencoded';
const JSON_TYPE = 'application/json';

function routeJson(filters: RouteFilterInput[], overrides: Partial<RouteDocumentInput> = {}): string {
  return JSON.stringify({ id: 'psp', kind: 'outbound', mode: 'test', outbound: { hosts: ['api.psp.test'] }, filters, ...overrides });
}

const STRIPE_FORM = routeJson([
  { location: 'form', field: 'card[number]', store: 'number' },
  { location: 'form', field: 'card[cvc]', store: 'cvv' },
  { location: 'form', field: 'card[exp_month]', store: 'expiry_month' },
  { location: 'form', field: 'card[exp_year]', store: 'expiry_year' },
  { location: 'form', field: 'card[name]', store: 'holder' },
]);

async function setup(renderMaxBytes?: number) {
  const store = await anEmptyRedisCardStore(db);
  const vault = aVault({ store, ...(renderMaxBytes === undefined ? {} : { renderMaxBytes }) });
  const made = await vault.tokenize(aCard({ aliasFormats: ['card_bin_last4', 'card_last4', 'uuid'], holderName: 'Zoë O’Brien & Co' }));
  const render = (route: string, contentType: string, body: string | Buffer, owner = A) =>
    renderRoute(vault, { owner, routeJson: route, contentType, body: Buffer.isBuffer(body) ? body : Buffer.from(body) });
  return { store, vault, made, render };
}

describe('RenderRoute', () => {
  it('fills a form from each alias format and the token id, encoding each value for a form', async () => {
    const { store, made, render } = await setup();
    const year = String(aCard().expiryYear);
    for (const alias of [made.token, ...Object.values(made.aliases)]) {
      const body = `card[number]=${alias}&card[exp_month]=${alias}&card[exp_year]=${alias}&card[name]=${alias}&amount=100`;
      const out = await render(STRIPE_FORM, FORM, body);
      expect(out.body.toString()).toBe(
        `card[number]=${VISA}&card[exp_month]=04&card[exp_year]=${year}&card[name]=Zo%C3%AB%20O%E2%80%99Brien%20%26%20Co&amount=100`,
      );
      expect(out.tokens).toEqual([made.token]);
    }
    await store.close();
  });

  it('fills JSON by pointer (strings and numbers) and text bodies by the alias format’s shape', async () => {
    const { store, made, render } = await setup();
    const route = routeJson([
      { location: 'json', pointer: '/source/number', store: 'number' },
      { location: 'json', pointer: '/source/name', store: 'holder' },
      { location: 'json', pointer: '/source/expiry', store: 'expiry' },
      { location: 'text', pattern: 'card_number', store: 'number', aliasFormat: 'card_last4' },
      { location: 'text', pattern: 'card_number', store: 'number', aliasFormat: 'uuid' },
    ]);
    const alias = made.aliases.card_bin_last4!;
    const json = await render(route, JSON_TYPE, `{"source":{"number":${alias},"name":"${alias}","expiry":"${made.aliases.uuid}"}}`);
    expect(JSON.parse(json.body.toString())).toEqual({
      source: { number: Number(VISA), name: 'Zoë O’Brien & Co', expiry: `04/${String(aCard().expiryYear).slice(-2)}` },
    });
    // A JSON number stays a number, byte for byte.
    expect(json.body.toString()).toContain(`"number":${VISA},`);
    const text = await render(route, 'text/plain', `pay ${made.aliases.card_last4} or ${made.aliases.uuid}, not 4000056655665556`);
    expect(text.body.toString()).toBe(`pay ${VISA} or ${VISA}, not 4000056655665556`);
    expect(text.tokens).toEqual([made.token]);
    await store.close();
  });

  it('takes the CVV once, for every place that asks, and refuses the next request cvv_unavailable', async () => {
    const { store, made, render } = await setup();
    const body = `card[number]=${made.aliases.uuid}&card[cvc]=${made.aliases.uuid}&card[cvc]=${made.token}`;
    expect((await render(STRIPE_FORM, FORM, body)).body.toString()).toBe(`card[number]=${VISA}&card[cvc]=123&card[cvc]=123`);
    expect(await codeOf(render(STRIPE_FORM, FORM, body))).toBe('cvv_unavailable');
    // Without a CVV place the card still renders.
    expect((await render(STRIPE_FORM, FORM, `card[number]=${made.token}`)).body.toString()).toBe(`card[number]=${VISA}`);
    await store.close();
  });

  it('opens a card and its CVV sealed under the merchant’s own key, as Render does, and takes the CVV once', async () => {
    const store = await anEmptyRedisCardStore(db);
    const root = keyRingOf(keyRingEntry('r1'));
    const vault = aVault({ store, keyRing: root, merchantKeys: new MerchantKeyRings({ root, store }) });
    const made = await vault.tokenize(aCard({ aliasFormats: ['uuid'] }));
    // Sealed under merchant_a's test-mode KEK, not the root key: the root ring alone opens neither record.
    const stored = (await readRecord(db.client, `tessera:card:{${made.token}}`)) as { sealed: { keyId: string } };
    expect(stored.sealed.keyId).toMatch(/^m\./);
    const body = `card[number]=${made.aliases.uuid}&card[cvc]=${made.token}`;
    const out = await renderRoute(vault, { owner: A, routeJson: STRIPE_FORM, contentType: FORM, body: Buffer.from(body) });
    expect(out.body.toString()).toBe(`card[number]=${VISA}&card[cvc]=123`);
    expect(await codeOf(renderRoute(vault, { owner: A, routeJson: STRIPE_FORM, contentType: FORM, body: Buffer.from(body) }))).toBe(
      'cvv_unavailable',
    );
    await store.close();
  });

  it('burns no CVV on a request refused for anything else (body too large, holder missing, another card without one)', async () => {
    const { store, vault, made, render } = await setup(200);
    // Under the limit as sent; over it once a long holder name is form-encoded into it.
    const longName = await vault.tokenize(aCard({ holderName: 'A B '.repeat(20).trim(), aliasFormats: ['uuid'] }));
    const padded = `card[number]=${longName.token}&card[cvc]=${longName.token}&card[name]=${longName.aliases.uuid}&pad=${'x'.repeat(40)}`;
    expect(padded.length).toBeLessThanOrEqual(200);
    expect(await codeOf(render(STRIPE_FORM, FORM, padded))).toBe('rendered_body_too_large');
    expect((await render(STRIPE_FORM, FORM, `card[cvc]=${longName.token}`)).body.toString()).toBe('card[cvc]=123');
    const nameless = await vault.tokenize(aCard({ holderName: '', cvv: '' }));
    expect(await codeOf(render(STRIPE_FORM, FORM, `card[number]=${nameless.token}&card[name]=${nameless.token}`))).toBe(
      'holder_name_unavailable',
    );
    const batch = routeJson([
      { location: 'json', pointer: '/a/number', store: 'number' },
      { location: 'json', pointer: '/a/cvc', store: 'cvv' },
      { location: 'json', pointer: '/b/number', store: 'number' },
      { location: 'json', pointer: '/b/cvc', store: 'cvv' },
    ]);
    const both = JSON.stringify({ a: { number: made.token, cvc: made.token }, b: { number: nameless.token, cvc: nameless.token } });
    expect(await codeOf(render(batch, JSON_TYPE, both))).toBe('cvv_unavailable');
    // The first card's CVV is still there.
    expect((await render(STRIPE_FORM, FORM, `card[number]=${made.token}&card[cvc]=${made.token}`)).body.toString()).toBe(
      `card[number]=${VISA}&card[cvc]=123`,
    );
    await store.close();
  });

  it('gives each number place its own card, and refuses a CVV of one card beside the number of another', async () => {
    const { store, vault, made, render } = await setup();
    const other = await vault.tokenize(aCard({ number: MASTERCARD, cvv: '' }));
    const route = routeJson([
      { location: 'json', pointer: '/payouts/0/number', store: 'number' },
      { location: 'json', pointer: '/payouts/1/number', store: 'number' },
      { location: 'json', pointer: '/payouts/0/cvc', store: 'cvv' },
    ]);
    const two = await render(route, JSON_TYPE, JSON.stringify({ payouts: [{ number: made.token }, { number: other.token }] }));
    expect(JSON.parse(two.body.toString())).toEqual({ payouts: [{ number: VISA }, { number: MASTERCARD }] });
    expect(two.tokens).toEqual([made.token, other.token]);
    const crossed = JSON.stringify({ payouts: [{ number: other.token, cvc: made.token }] });
    expect(await codeOf(render(route, JSON_TYPE, crossed))).toBe('parameter_invalid');
    // The refusal came before the CVV was touched.
    expect((await render(STRIPE_FORM, FORM, `card[cvc]=${made.token}`)).body.toString()).toBe('card[cvc]=123');
    await store.close();
  });

  it('leaves values that name none of the merchant’s tokens of this mode as they are', async () => {
    const { store, vault, made, render } = await setup();
    const foreign = await vault.tokenize(aCard({ merchantId: 'merchant_b', aliasFormats: ['uuid'] }));
    const body = `card[number]=${foreign.aliases.uuid}&card[exp_month]=12&card[cvc]=tok.AAAAAAAAAAAAAAAAAAAAAA&card[name]=${made.token}`;
    const out = await render(STRIPE_FORM, FORM, body);
    expect(out.body.toString()).toBe(body.replace(made.token, 'Zo%C3%AB%20O%E2%80%99Brien%20%26%20Co'));
    expect(out.tokens).toEqual([made.token]);
    // Another mode's key finds nothing of test mode (its route is refused first when it names the other mode).
    expect(await codeOf(render(STRIPE_FORM, FORM, body, { merchantId: 'merchant_a', mode: 'live' }))).toBe('parameter_invalid');
    const live = await render(routeJson([{ location: 'form', field: 'card[name]', store: 'holder' }], { mode: 'live' }), FORM, body, {
      merchantId: 'merchant_a',
      mode: 'live',
    });
    expect(live).toEqual({ body: Buffer.from(body), tokens: [] });
    // No mode at all renders nothing (the contract's MODE_UNSPECIFIED).
    expect(await render(STRIPE_FORM, FORM, body, { merchantId: 'merchant_a', mode: '' })).toEqual({ body: Buffer.from(body), tokens: [] });
    await store.close();
  });

  it('keeps a body that is not UTF-8 byte for byte around the places it fills', async () => {
    const { store, made, render } = await setup();
    const route = routeJson([{ location: 'text', pattern: 'card_number', store: 'number', aliasFormat: 'token' }]);
    const body = Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, 0x80]), Buffer.from(` ${made.token} `), Buffer.from([0xc3, 0x28])]);
    const out = await render(route, 'multipart/form-data; boundary=x', body);
    expect(out.body).toEqual(Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, 0x80]), Buffer.from(` ${VISA} `), Buffer.from([0xc3, 0x28])]));
    await store.close();
  });

  it('refuses a route that is not an outbound route document, and a body over RENDER_MAX_BYTES', async () => {
    const { store, render } = await setup(64);
    expect(await codeOf(render('{', FORM, 'x'))).toBe('parameter_invalid');
    expect(await codeOf(render(JSON.stringify({ id: 'x' }), FORM, 'x'))).toBe('parameter_invalid');
    const inbound = routeJson([{ location: 'form', field: 'n', store: 'number' }], {
      kind: 'inbound',
      outbound: undefined,
      inbound: { path: '/in', upstream: 'https://shop.test/in' },
    });
    expect(await codeOf(render(inbound, FORM, 'x'))).toBe('parameter_invalid');
    expect(await codeOf(render(STRIPE_FORM, FORM, 'x'.repeat(65)))).toBe('rendered_body_too_large');
    await store.close();
  });

  it('refuses a body whose filters find more distinct values than it looks up, before looking any up', async () => {
    const { store, made, render } = await setup();
    const route = routeJson([{ location: 'text', pattern: 'card_number', store: 'number', aliasFormat: 'uuid' }]);
    const uuids = Array.from({ length: MAX_ROUTE_CANDIDATES }, () => randomUUID());
    expect((await render(route, 'text/plain', [...uuids, made.aliases.uuid].slice(1).join(' '))).tokens).toEqual([made.token]);
    expect(await codeOf(render(route, 'text/plain', [...uuids, made.aliases.uuid].join(' ')))).toBe('parameter_invalid');
    await store.close();
  });
});

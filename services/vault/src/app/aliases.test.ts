import { Redis } from 'ioredis';
import { isLuhnValid } from '@tessera/common';
import { useRedisServer } from '@tessera/test-support';
import { tokenAliasesKey } from '../store/records';
import { aCard, anEmptyRedisCardStore, aVault, codeOf } from '../test/builders';

const JSON_TYPE = 'application/json';
const A = { merchantId: 'merchant_a', mode: 'test' };
const B = { merchantId: 'merchant_b', mode: 'test' };
const A_LIVE = { merchantId: 'merchant_a', mode: 'live' };

jest.setTimeout(20_000);

const db = useRedisServer((url) => new Redis(url));

async function setup() {
  const store = await anEmptyRedisCardStore(db);
  return { store, vault: aVault({ store }) };
}

describe('Vault aliases', () => {
  it('gives one alias per requested format, each resolving to the token for reads and renders', async () => {
    const { vault, store } = await setup();
    const record = await vault.tokenize(aCard({ aliasFormats: ['card_bin_last4', 'card_last4', 'uuid'] }));
    expect(Object.keys(record.aliases).sort()).toEqual(['card_bin_last4', 'card_last4', 'uuid']);
    const binLast4 = record.aliases.card_bin_last4 as string;
    expect(binLast4).toMatch(/^424242\d{6}4242$/);
    expect(binLast4).not.toBe('4242424242424242');
    expect(isLuhnValid(binLast4)).toBe(true);
    for (const alias of Object.values(record.aliases)) {
      expect(await vault.getToken(A, alias)).toMatchObject({ token: record.token, aliases: record.aliases });
      const body = await vault.render(A, alias, '{"n":"[CARD_NUMBER]"}', JSON_TYPE);
      expect(JSON.parse(body.toString('utf8'))).toEqual({ n: '4242424242424242' });
    }
    expect(await vault.getToken(A, record.token)).toMatchObject({ aliases: record.aliases });
    await store.close();
  });

  it("answers another merchant's or mode's use of an alias like an unknown token", async () => {
    const { vault, store } = await setup();
    const record = await vault.tokenize(aCard({ aliasFormats: ['card_last4', 'uuid'] }));
    for (const alias of Object.values(record.aliases)) {
      expect(await codeOf(vault.getToken(B, alias))).toBe('token_not_found');
      expect(await codeOf(vault.getToken(A_LIVE, alias))).toBe('token_not_found');
      expect(await codeOf(vault.render(B, alias, '[CARD_NUMBER]', 'text/plain'))).toBe('token_not_found');
    }
    await store.close();
  });

  it('refuses a live alias given as a card number (number_is_alias), in test mode too, and in batches', async () => {
    const { vault, store } = await setup();
    const record = await vault.tokenize(aCard({ aliasFormats: ['card_bin_last4'] }));
    const alias = record.aliases.card_bin_last4 as string;
    expect(await codeOf(vault.tokenize(aCard({ number: alias, mode: 'test' })))).toBe('number_is_alias');
    const [item] = await vault.tokenizeBatch([aCard({ number: alias, mode: 'test' })]);
    expect(item).toMatchObject({ code: 'number_is_alias' });
    // Not this merchant's alias: an ordinary (here: refused as not a test card) number.
    expect(await codeOf(vault.tokenize(aCard({ merchantId: 'merchant_b', number: alias, mode: 'test' })))).toBe('live_card_in_test_mode');
    await store.close();
  });

  it('deletes the aliases with the token: they stop resolving and leave no index entry', async () => {
    const { vault, store } = await setup();
    const record = await vault.tokenize(aCard({ aliasFormats: ['card_last4', 'uuid'] }));
    expect(await db.client.keys('tessera:card:alias:*')).toHaveLength(2);
    await vault.deleteToken(A, record.aliases.uuid as string);
    for (const alias of Object.values(record.aliases)) expect(await codeOf(vault.getToken(A, alias))).toBe('token_not_found');
    expect(await db.client.keys('tessera:card:alias:*')).toEqual([]);
    expect(await db.client.exists(tokenAliasesKey(record.token))).toBe(0);
    // No longer an alias: the number is an ordinary (non-test) card number again.
    expect(await codeOf(vault.tokenize(aCard({ number: record.aliases.card_last4 as string, mode: 'test' })))).toBe(
      'live_card_in_test_mode',
    );
    await store.close();
  });

  it('dedupe keeps the aliases a token has and adds the formats it lacks, one per format', async () => {
    const { vault, store } = await setup();
    const first = await vault.tokenize(aCard({ dedupe: true, aliasFormats: ['card_bin_last4'] }));
    const again = await vault.tokenize(aCard({ dedupe: true, aliasFormats: ['card_bin_last4', 'uuid'] }));
    expect(again).toMatchObject({ token: first.token, deduplicated: true });
    expect(again.aliases.card_bin_last4).toBe(first.aliases.card_bin_last4);
    expect(again.aliases.uuid).toMatch(/^[0-9a-f-]{36}$/);
    const concurrent = await Promise.all([1, 2, 3].map(() => vault.tokenize(aCard({ dedupe: true, aliasFormats: ['card_last4'] }))));
    const kept = new Set(concurrent.map((r) => r.aliases.card_last4));
    expect(kept.size).toBe(1);
    expect((await vault.getToken(A, first.token)).aliases).toEqual({ ...again.aliases, card_last4: [...kept][0] });
    await store.close();
  });

  it('names aliases in the index by a keyed digest: no key holds the card number or a numeric alias, whatever was looked up', async () => {
    const { vault, store } = await setup();
    const record = await vault.tokenize(aCard({ aliasFormats: ['card_bin_last4', 'card_last4'] }));
    await vault.getToken(A, record.aliases.card_bin_last4 as string);
    await codeOf(vault.getToken(A, '4111111111111111'));
    const keys = (await db.client.keys('*')).join(' ');
    for (const digits of ['4242424242424242', '4111111111111111', ...Object.values(record.aliases)]) expect(keys).not.toContain(digits);
    await store.close();
  });

  it('refuses unknown or repeated formats without echoing them', async () => {
    const { vault, store } = await setup();
    const unknown = vault.tokenize(aCard({ aliasFormats: ['pan'] }));
    await expect(unknown).rejects.toMatchObject({ code: 'parameter_invalid', param: 'aliasFormats' });
    const twice = vault.tokenize(aCard({ aliasFormats: ['uuid', 'uuid'] }));
    await expect(twice).rejects.toMatchObject({ code: 'parameter_invalid', param: 'aliasFormats' });
    await store.close();
  });
});

describe('the alias index', () => {
  it('lets exactly one of two concurrent claims of the same alias win', async () => {
    const store = await anEmptyRedisCardStore(db);
    for (let round = 0; round < 20; round++) {
      const alias = `42424200000${round.toString().padStart(3, '0')}42`;
      const wins = await Promise.all([
        store.claimAlias('merchant_a', 'test', alias, 'tok.AAAAAAAAAAAAAAAAAAAAAA', 60_000),
        store.claimAlias('merchant_a', 'test', alias, 'tok.BBBBBBBBBBBBBBBBBBBBBB', 60_000),
      ]);
      expect(wins.filter(Boolean)).toHaveLength(1);
      const holder = await store.findAlias('merchant_a', 'test', alias);
      expect(holder).toBe(wins[0] ? 'tok.AAAAAAAAAAAAAAAAAAAAAA' : 'tok.BBBBBBBBBBBBBBBBBBBBBB');
      // Another merchant's or mode's index is another key: the same alias is free there.
      expect(await store.claimAlias('merchant_b', 'test', alias, 'tok.CCCCCCCCCCCCCCCCCCCCCC', 60_000)).toBe(true);
      expect(await store.claimAlias('merchant_a', 'live', alias, 'tok.CCCCCCCCCCCCCCCCCCCCCC', 60_000)).toBe(true);
    }
    await store.close();
  });

  it('releases only entries that still name the token', async () => {
    const store = await anEmptyRedisCardStore(db);
    await store.claimAlias('merchant_a', 'test', 'x-alias', 'tok.AAAAAAAAAAAAAAAAAAAAAA', 60_000);
    await store.releaseAliases('merchant_a', 'test', ['x-alias'], 'tok.BBBBBBBBBBBBBBBBBBBBBB');
    expect(await store.findAlias('merchant_a', 'test', 'x-alias')).toBe('tok.AAAAAAAAAAAAAAAAAAAAAA');
    await store.releaseAliases('merchant_a', 'test', ['x-alias'], 'tok.AAAAAAAAAAAAAAAAAAAAAA');
    expect(await store.findAlias('merchant_a', 'test', 'x-alias')).toBeNull();
    await store.close();
  });
});

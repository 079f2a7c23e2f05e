/**
 * Issue 28, item 1: aliases, other names of a token in formats legacy systems accept, through the
 * real stack: each format is answered, resolves on GET, /v1/proxy and its dry run, is unknown to
 * another merchant and mode, is refused as a card number, goes with its token, and survives dedupe.
 */
import { isLuhnValid } from '@tessera/common';
import { aCard, apiClient, TEST_CARDS, useStack } from './harness';

jest.setTimeout(60_000);

const env = useStack({ psp: true });

let asAcme: ReturnType<typeof apiClient>;
let asAcmeLive: ReturnType<typeof apiClient>;
let asOther: ReturnType<typeof apiClient>;

beforeAll(() => {
  asAcme = apiClient(env.stack, env.stack.createKey('acme', 'test').apiKey);
  asAcmeLive = apiClient(env.stack, env.stack.createKey('acme', 'live').apiKey);
  asOther = apiClient(env.stack, env.stack.createKey('other', 'test').apiKey);
});

beforeEach(() => env.psp.reset());

const ALL_FORMATS = ['card_bin_last4', 'card_last4', 'uuid'];

function proxyBody(token: string): Record<string, unknown> {
  return {
    method: 'post',
    token,
    pspUrl: `${env.psp.url}/v1/charges`,
    pspHeaders: { 'content-type': 'application/json' },
    pspBody: JSON.stringify({ number: '[CARD_NUMBER]' }),
  };
}

async function tokenizeWithAliases(body: Record<string, unknown> = {}): Promise<{ token: string; aliases: Record<string, string> }> {
  const res = await asAcme('POST', '/v1/token', aCard({ number: TEST_CARDS.visa, aliasFormats: ALL_FORMATS, ...body }));
  expect([200, 201]).toContain(res.status);
  return res.body as { token: string; aliases: Record<string, string> };
}

describe('aliases', () => {
  it('answers one alias per format, each resolving on GET and rendering the real number to the PSP', async () => {
    const { token, aliases } = await tokenizeWithAliases();
    expect(token).toMatch(/^tok\./);
    expect(Object.keys(aliases).sort()).toEqual(ALL_FORMATS);
    expect(aliases.card_bin_last4).toMatch(/^424242\d{6}4242$/);
    expect(aliases.card_last4).toMatch(/^[1-9]\d{11}4242$/);
    expect(aliases.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    for (const numeric of [aliases.card_bin_last4!, aliases.card_last4!]) {
      expect(isLuhnValid(numeric)).toBe(true);
      expect(numeric).not.toBe(TEST_CARDS.visa);
    }
    for (const alias of Object.values(aliases)) {
      const read = await asAcme('GET', `/v1/token/${alias}`);
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({ token, last4: '4242', aliases });
      const dryRun = await asAcme('POST', '/v1/proxy/dry-run', proxyBody(alias));
      expect(dryRun.body).toMatchObject({ wouldSend: true, placeholders: { filled: ['[CARD_NUMBER]'] } });
      env.psp.reset();
      const sent = await asAcme('POST', '/v1/proxy', proxyBody(alias));
      expect(sent.status).toBe(200);
      expect(env.psp.requests).toHaveLength(1);
      expect(JSON.parse(env.psp.requests[0]!.body.toString('utf8'))).toEqual({ number: TEST_CARDS.visa });
    }
  });

  it("answers another merchant's or mode's use of an alias 404 token_not_found, like an unknown token", async () => {
    const { aliases } = await tokenizeWithAliases();
    for (const alias of Object.values(aliases)) {
      for (const call of [asOther, asAcmeLive]) {
        const res = await call('GET', `/v1/token/${alias}`);
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('token_not_found');
        expect((await call('DELETE', `/v1/token/${alias}`)).status).toBe(404);
      }
      // A live key reaches https PSPs only (checked before the token): the other merchant's test key shows the proxy.
      const proxied = await asOther('POST', '/v1/proxy', proxyBody(alias));
      expect(proxied.status).toBe(404);
      expect(proxied.body.error.code).toBe('token_not_found');
    }
    // Nothing was deleted: the owner still reads it.
    expect((await asAcme('GET', `/v1/token/${aliases.uuid!}`)).status).toBe(200);
    expect(env.psp.requests).toHaveLength(0);
  });

  it('refuses a live alias given as a card number: 400 number_is_alias', async () => {
    const { aliases } = await tokenizeWithAliases();
    for (const alias of [aliases.card_bin_last4!, aliases.card_last4!]) {
      const res = await asAcme('POST', '/v1/token', aCard({ number: alias }));
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'number_is_alias', param: 'number' });
      expect(JSON.stringify(res.body)).not.toContain(alias);
    }
  });

  it('deletes the aliases with the token', async () => {
    const { token, aliases } = await tokenizeWithAliases();
    expect((await asAcme('DELETE', `/v1/token/${aliases.uuid}`)).status).toBe(204);
    expect((await asAcme('GET', `/v1/token/${token}`)).status).toBe(404);
    for (const alias of Object.values(aliases)) expect((await asAcme('GET', `/v1/token/${alias}`)).status).toBe(404);
  });

  it('dedupe answers the existing token with its aliases, and adds a format it lacks', async () => {
    const first = await asAcme('POST', '/v1/token', aCard({ number: TEST_CARDS.mastercard, dedupe: true, aliasFormats: ['card_last4'] }));
    expect(first.status).toBe(201);
    const again = await asAcme(
      'POST',
      '/v1/token',
      aCard({ number: TEST_CARDS.mastercard, dedupe: true, aliasFormats: ['card_last4', 'card_bin_last4'] }),
    );
    expect(again.status).toBe(200);
    expect(again.body.token).toBe(first.body.token);
    expect(again.body.aliases.card_last4).toBe(first.body.aliases.card_last4);
    expect(again.body.aliases.card_bin_last4).toMatch(/^555555\d{6}4444$/);
    expect((await asAcme('GET', `/v1/token/${first.body.token as string}`)).body.aliases).toEqual(again.body.aliases);
  });

  it('answers no aliases when none are asked, and refuses an unknown format', async () => {
    const plain = await asAcme('POST', '/v1/token', aCard({ number: TEST_CARDS.visa }));
    expect(plain.status).toBe(201);
    expect(plain.body.aliases).toEqual({});
    const bad = await asAcme('POST', '/v1/token', aCard({ number: TEST_CARDS.visa, aliasFormats: ['pan'] }));
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'parameter_invalid', param: 'aliasFormats' });
  });
});

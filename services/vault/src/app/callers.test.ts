import { CallerNotAllowedError } from '@tessera/protos';
import type { CardToTokenize, TokenRecordView } from '../domain/card';
import { aCard } from '../test/builders';
import { checkTokenizeBy, tokenizeAs, tokenRecordFor } from './callers';

const RECORD: TokenRecordView = {
  token: 'tok.AAAAAAAAAAAAAAAAAAAAAA',
  last4: '4242',
  brand: 'visa',
  expiryMonth: 4,
  expiryYear: 2031,
  createdAt: '2030-01-01T00:00:00.000Z',
  expiresAt: '2030-01-01T01:00:00.000Z',
  cvvAvailable: true,
  holderNameAvailable: true,
  provisional: true,
  bin: '424242',
  fingerprint: 'Zm9vYmFyYmF6cXV4cXV1eA',
  deduplicated: true,
  aliases: {},
};

/** What a Vault that would tokenize anything was asked. */
function recordingVault(): { tokenized: CardToTokenize[]; tokenize(card: CardToTokenize): Promise<TokenRecordView> } {
  const tokenized: CardToTokenize[] = [];
  return {
    tokenized,
    tokenize: async (card) => {
      tokenized.push(card);
      return RECORD;
    },
  };
}

describe('what each vault caller may ask and see', () => {
  it('lets the fields identity create provisional tokens only, never with dedupe', () => {
    expect(() => checkTokenizeBy('fields', { provisional: true })).not.toThrow();
    expect(() => checkTokenizeBy('fields', {})).toThrow(CallerNotAllowedError);
    expect(() => checkTokenizeBy('fields', { provisional: false })).toThrow(CallerNotAllowedError);
    expect(() => checkTokenizeBy('fields', { provisional: true, dedupe: true })).toThrow(CallerNotAllowedError);
  });

  it('leaves the services what the caller policy gave them', () => {
    expect(() => checkTokenizeBy('service', {})).not.toThrow();
    expect(() => checkTokenizeBy('service', { dedupe: true })).not.toThrow();
    expect(tokenRecordFor('service', RECORD)).toEqual(RECORD);
  });

  it('shows the fields identity nothing derived from the card number beyond brand and last four', () => {
    expect(tokenRecordFor('fields', RECORD)).toEqual({ ...RECORD, bin: '', fingerprint: '', deduplicated: false });
  });

  it('refuses a token the fields identity may not make before the vault writes anything', async () => {
    const vault = recordingVault();
    await expect(tokenizeAs(vault, 'fields', aCard())).rejects.toThrow(CallerNotAllowedError);
    await expect(tokenizeAs(vault, 'fields', aCard({ provisional: true, dedupe: true }))).rejects.toThrow(CallerNotAllowedError);
    expect(vault.tokenized).toEqual([]);
    expect(await tokenizeAs(vault, 'fields', aCard({ provisional: true }))).toMatchObject({ last4: '4242', fingerprint: '', bin: '' });
    expect(await tokenizeAs(vault, 'service', aCard())).toEqual(RECORD);
  });
});

import { TesseraError } from '@tessera/common';
import { aCardBody as card, recordingTokenize } from '../testing/fixtures';
import { createBrowserToken } from './browserTokens';

const OWNER = { merchantId: 'shop', mode: 'test' as const };
const CTX = { requestId: 'req_1' };
const VISA = '4242424242424242';

/** The vault's Tokenize, recorded. */
function recordingVault() {
  const { tokenized, tokenize } = recordingTokenize();
  return { tokenized, vault: { tokenize } };
}

describe('browser tokenization', () => {
  it('tokenizes a browser card as provisional, with the shorter life it was given, after its card-testing check', async () => {
    const { vault, tokenized } = recordingVault();
    const admitted: string[] = [];
    await createBrowserToken(vault, OWNER, card(), { admitCard: async (n) => void admitted.push(n), provisionalTtlSeconds: 60 }, CTX);
    expect(admitted).toEqual([VISA]);
    expect(tokenized).toEqual([
      expect.objectContaining({ merchantId: 'shop', mode: 'test', provisional: true, provisionalTtlSeconds: 60 }),
    ]);
  });

  it('sends nothing to the vault when the card-testing check refuses the card', async () => {
    const { vault, tokenized } = recordingVault();
    const refusal = new TesseraError('rate_limited', { retryAfterSeconds: 30 });
    await expect(createBrowserToken(vault, OWNER, card(), { admitCard: () => Promise.reject(refusal) }, CTX)).rejects.toBe(refusal);
    expect(tokenized).toEqual([]);
  });

  it('never runs the card-testing check on a card the rules refuse', async () => {
    const { vault, tokenized } = recordingVault();
    const admitted: string[] = [];
    await expect(
      createBrowserToken(vault, OWNER, card({ number: '4242424242424241' }), { admitCard: async (n) => void admitted.push(n) }, CTX),
    ).rejects.toMatchObject({ status: 400 });
    expect(admitted).toEqual([]);
    expect(tokenized).toEqual([]);
  });

  it('refuses dedupe from a browser, which only a merchant server may ask for', async () => {
    const { vault, tokenized } = recordingVault();
    await expect(createBrowserToken(vault, OWNER, { ...card(), dedupe: true }, {}, CTX)).rejects.toMatchObject({ status: 400 });
    expect(tokenized).toEqual([]);
  });
});

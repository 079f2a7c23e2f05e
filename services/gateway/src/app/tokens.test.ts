import { aCardBody as card, aTokenRecord, recordingTokenize } from '../testing/fixtures';
import { createToken, readToken } from './tokens';

const OWNER = { merchantId: 'shop', mode: 'test' as const };
const CTX = { requestId: 'req_1' };

/** The vault's Tokenize, recorded. */
function recordingVault() {
  const { tokenized, tokenize } = recordingTokenize();
  return { tokenized, vault: { tokenize, getToken: async () => aTokenRecord() } };
}

describe('token use cases', () => {
  it('passes dedupe of a merchant server to the vault, on an ordinary token', async () => {
    const { vault, tokenized } = recordingVault();
    await createToken(vault, OWNER, { ...card(), dedupe: true }, CTX);
    expect(tokenized).toEqual([expect.objectContaining({ provisional: false, dedupe: true })]);
  });

  it('passes the requested alias formats to the vault, and none when none are asked', async () => {
    const { vault, tokenized } = recordingVault();
    await createToken(vault, OWNER, { ...card(), aliasFormats: ['card_bin_last4', 'uuid'] }, CTX);
    await createToken(vault, OWNER, card(), CTX);
    expect(tokenized[0]).toMatchObject({ aliasFormats: ['card_bin_last4', 'uuid'] });
    expect(tokenized[1]).not.toHaveProperty('aliasFormats');
  });

  it('refuses unknown or repeated alias formats before asking the vault', async () => {
    const { vault, tokenized } = recordingVault();
    await expect(createToken(vault, OWNER, { ...card(), aliasFormats: ['pan'] }, CTX)).rejects.toMatchObject({ param: 'aliasFormats' });
    await expect(createToken(vault, OWNER, { ...card(), aliasFormats: ['uuid', 'uuid'] }, CTX)).rejects.toMatchObject({
      param: 'aliasFormats',
    });
    expect(tokenized).toEqual([]);
  });

  it("lets a test key's non-test number reach the vault (which tells an alias from a live card), but never a malformed one", async () => {
    const { vault, tokenized } = recordingVault();
    await createToken(vault, OWNER, card({ number: '4242424242421230' }), CTX);
    expect(tokenized).toEqual([expect.objectContaining({ number: '4242424242421230', mode: 'test' })]);
    await expect(createToken(vault, OWNER, card({ number: '4242424242421235' }), CTX)).rejects.toMatchObject({
      code: 'card_number_invalid',
    });
    expect(tokenized).toHaveLength(1);
  });

  it('answers a token longer than any we issue as not found, without asking the vault', async () => {
    const getToken = jest.fn(async () => aTokenRecord());
    await expect(readToken({ getToken }, OWNER, 't'.repeat(257), CTX)).rejects.toMatchObject({ code: 'token_not_found' });
    expect(getToken).not.toHaveBeenCalled();
  });
});

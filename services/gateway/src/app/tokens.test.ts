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

  it('answers a token longer than any we issue as not found, without asking the vault', async () => {
    const getToken = jest.fn(async () => aTokenRecord());
    await expect(readToken({ getToken }, OWNER, 't'.repeat(257), CTX)).rejects.toMatchObject({ code: 'token_not_found' });
    expect(getToken).not.toHaveBeenCalled();
  });
});

import { aCardBody as card, aTokenRecord, recordingTokenize } from '../testing/fixtures';
import { TesseraError } from '@tessera/common';
import { createToken, deleteToken, readToken, retainToken, updateToken } from './tokens';
import type { RecordEvent } from './events';

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

describe('token events', () => {
  function recordingEvents() {
    const recorded: Array<{ type: string; owner: unknown; object: Record<string, unknown> }> = [];
    const record: RecordEvent = async (type, owner, object) => {
      recorded.push({ type, owner, object });
    };
    return { recorded, record };
  }
  const CARD_VIEW = { id: 'tok.AAAABBBBCCCCDDDDEEEEFF', brand: 'visa', last4: '4242', expiryMonth: 12, expiryYear: 2035 };

  it('records token.created with what the answer shows of the card (no bin, no fingerprint), and nothing for a dedupe answer', async () => {
    const events = recordingEvents();
    await createToken({ tokenize: async () => aTokenRecord() }, OWNER, card(), CTX, events.record);
    await createToken(
      { tokenize: async () => aTokenRecord({ deduplicated: true }) },
      OWNER,
      { ...card(), dedupe: true },
      CTX,
      events.record,
    );
    expect(events.recorded).toEqual([{ type: 'token.created', owner: OWNER, object: CARD_VIEW }]);
  });

  it('records nothing when the vault refused', async () => {
    const events = recordingEvents();
    const refuse = async (): Promise<never> => {
      throw new TesseraError('token_not_found');
    };
    await expect(createToken({ tokenize: refuse }, OWNER, card(), CTX, events.record)).rejects.toThrow();
    await expect(deleteToken({ deleteToken: refuse }, OWNER, 'tok.x', CTX, events.record)).rejects.toThrow();
    await expect(updateToken({ updateToken: refuse }, OWNER, 'tok.x', { holderName: 'A B' }, CTX, events.record)).rejects.toThrow();
    expect(events.recorded).toEqual([]);
  });

  it('records token.updated and token.deleted (only the id: the 204 shows nothing else)', async () => {
    const events = recordingEvents();
    await updateToken(
      { updateToken: async () => aTokenRecord() },
      OWNER,
      'tok.AAAABBBBCCCCDDDDEEEEFF',
      { holderName: 'A B' },
      CTX,
      events.record,
    );
    await deleteToken({ deleteToken: async () => undefined }, OWNER, 'tok.AAAABBBBCCCCDDDDEEEEFF', CTX, events.record);
    expect(events.recorded).toEqual([
      { type: 'token.updated', owner: OWNER, object: CARD_VIEW },
      { type: 'token.deleted', owner: OWNER, object: { id: 'tok.AAAABBBBCCCCDDDDEEEEFF' } },
    ]);
  });

  it('records token.retained when a provisional token is retained, not when an ordinary one is', async () => {
    const events = recordingEvents();
    const vault = (provisional: boolean) => ({
      getToken: async () => aTokenRecord({ provisional }),
      retainToken: async () => aTokenRecord({ provisional: false }),
    });
    await retainToken(vault(true), OWNER, 'tok.AAAABBBBCCCCDDDDEEEEFF', {}, CTX, events.record);
    await retainToken(vault(false), OWNER, 'tok.AAAABBBBCCCCDDDDEEEEFF', {}, CTX, events.record);
    expect(events.recorded).toEqual([{ type: 'token.retained', owner: OWNER, object: CARD_VIEW }]);
  });
});

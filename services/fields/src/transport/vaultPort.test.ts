import type { AttachCvvRequest, TokenizeRequest, VaultCalls } from '@tessera/protos';
import { aTokenRecord } from '../testing/fixtures';
import { fieldsVaultOver } from './vaultPort';

/** The shared vault calls, recorded by name: what the fields service's port lets through. */
function recordingCalls(): { calls: VaultCalls; made: Array<[string, unknown]> } {
  const made: Array<[string, unknown]> = [];
  const record = (name: string) => async (request: unknown) => {
    made.push([name, request]);
    return aTokenRecord();
  };
  const calls = {
    tokenize: record('tokenize'),
    attachCvv: record('attachCvv'),
    getToken: record('getToken'),
    retainToken: record('retainToken'),
    deleteToken: record('deleteToken'),
    updateToken: record('updateToken'),
    ready: async () => ({ ready: true, detail: '' }),
    close: () => undefined,
  } as unknown as VaultCalls;
  return { calls, made };
}

describe("the fields service's vault port", () => {
  const card: Omit<TokenizeRequest, 'provisional'> = {
    merchantId: 'shop',
    mode: 'test',
    number: '4242424242424242',
    holderName: '',
    expiryMonth: 12,
    expiryYear: 2040,
    cvv: '123',
  };

  it('offers only a provisional tokenize and a granted CVC attach: no read, update, retain or delete', () => {
    const port = fieldsVaultOver(recordingCalls().calls);
    expect(Object.keys(port).sort()).toEqual(['attachCvv', 'close', 'ready', 'tokenize']);
  });

  it('makes every token provisional, whatever the request says', async () => {
    const { calls, made } = recordingCalls();
    const port = fieldsVaultOver(calls);
    await port.tokenize({ ...card, provisional: false } as TokenizeRequest, { requestId: 'r1' });
    await port.tokenize(card, { requestId: 'r2' });
    expect(made.map(([name, request]) => [name, (request as TokenizeRequest).provisional])).toEqual([
      ['tokenize', true],
      ['tokenize', true],
    ]);
  });

  it('sends the CVC with its grant', async () => {
    const { calls, made } = recordingCalls();
    const attach: AttachCvvRequest & { cvcSession: string } = {
      merchantId: 'shop',
      mode: 'test',
      token: 'tok.A',
      cvv: '123',
      cvvIsInteger: false,
      cvcSession: `cvcs_${'A'.repeat(43)}`,
    };
    await fieldsVaultOver(calls).attachCvv(attach, { requestId: 'r1' });
    expect(made).toEqual([['attachCvv', attach]]);
  });
});

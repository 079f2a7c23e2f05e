import { TesseraError } from '@tessera/common';
import type { AttachCvvRequest } from '@tessera/protos';
import { newCvcSessionSecret } from '@tessera/merchant-data';
import { attachCvcUnderSession } from './cvcAttach';
import type { GrantedCvcAttach } from './ports';

const KEY = { merchantId: 'shop', mode: 'test' as const };
const TOKEN = 'tok.AAAAAAAAAAAAAAAAAAAAAA';
const CTX = { requestId: 'req_1' };

/** The vault's AttachCvv, recorded: the vault claims the grant, so what matters here is what it is sent. */
class RecordingVault {
  attached: AttachCvvRequest[] = [];
  async attachCvv(request: GrantedCvcAttach) {
    this.attached.push(request);
    return { token: request.token } as Awaited<ReturnType<Parameters<typeof attachCvcUnderSession>[0]['attachCvv']>>;
  }
}

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'attached',
    (err: TesseraError) => err.code,
  );

describe('attaching a CVC under a CVC session', () => {
  it('sends the CVC with its grant to the vault, which claims it', async () => {
    const vault = new RecordingVault();
    const secret = newCvcSessionSecret();
    expect(await codeOf(attachCvcUnderSession(vault, KEY, TOKEN, { cvv: '123', cvcSession: secret }, CTX))).toBe('attached');
    expect(await codeOf(attachCvcUnderSession(vault, KEY, TOKEN, { cvv: 4567, cvcSession: secret }, CTX))).toBe('attached');
    expect(vault.attached).toEqual([
      { merchantId: 'shop', mode: 'test', token: TOKEN, cvv: '123', cvvIsInteger: false, cvcSession: secret },
      { merchantId: 'shop', mode: 'test', token: TOKEN, cvv: '4567', cvvIsInteger: true, cvcSession: secret },
    ]);
  });

  it('refuses a missing grant and one that cannot be a grant we issued, without asking the vault', async () => {
    const vault = new RecordingVault();
    expect(await codeOf(attachCvcUnderSession(vault, KEY, TOKEN, { cvv: '123', cvcSession: undefined }, CTX))).toBe('cvc_session_required');
    expect(await codeOf(attachCvcUnderSession(vault, KEY, TOKEN, { cvv: '123', cvcSession: 'cvcs_short' }, CTX))).toBe(
      'cvc_session_not_found',
    );
    expect(await codeOf(attachCvcUnderSession(vault, KEY, TOKEN, { cvv: '123', cvcSession: `tok_${'A'.repeat(43)}` }, CTX))).toBe(
      'cvc_session_not_found',
    );
    expect(vault.attached).toEqual([]);
  });
});

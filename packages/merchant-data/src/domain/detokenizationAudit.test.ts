import { buildDetokenizationRecord, CARD_NUMBER_LIKE } from './detokenizationAudit';

const record = (token: string, pspUrl: string) =>
  buildDetokenizationRecord({
    requestId: 'req_1',
    merchantId: 'acme',
    keyId: 'key_1',
    token,
    pspUrl,
    method: 'POST',
    status: 404,
    code: 'token_not_found',
    now: new Date(0),
  });

describe('detokenization audit record', () => {
  it('keeps the token and the PSP host (no path or query) as they are', () => {
    expect(record('tok.abc', 'https://psp.example:8443/charge?card=1')).toMatchObject({ token: 'tok.abc', pspHost: 'psp.example:8443' });
  });

  it.each(['4242424242424242', '4242_4242_4242_4242', '3782-822463-10005', '500000000009'])(
    'stores a marker, not the text, for a token or PSP host that could be the card number %s',
    (pan) => {
      const stored = record(pan, `https://${pan}.example/charge`);
      expect(stored).toMatchObject({ token: CARD_NUMBER_LIKE, pspHost: CARD_NUMBER_LIKE });
      expect(JSON.stringify(stored)).not.toContain(pan);
    },
  );
});

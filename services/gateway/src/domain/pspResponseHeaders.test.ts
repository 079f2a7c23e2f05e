import { passedOnPspHeaderName } from './pspResponseHeaders';

describe('PSP response headers passed on', () => {
  it('keeps the PSP’s own headers under their own names', () => {
    for (const name of ['Content-Type', 'x-psp-decline', 'Location', 'Retry-After', 'Cache-Control', 'X-Request-Ids', 'tessera-note']) {
      expect(passedOnPspHeaderName(name)).toBe(name);
    }
  });

  it('renames the names Tessera speaks for itself with to x-psp-<name>, whatever their case', () => {
    expect(passedOnPspHeaderName('X-Tessera-Error')).toBe('x-psp-x-tessera-error');
    expect(passedOnPspHeaderName('x-tessera-request-id')).toBe('x-psp-x-tessera-request-id');
    expect(passedOnPspHeaderName('x-tessera-psp-ms')).toBe('x-psp-x-tessera-psp-ms');
    expect(passedOnPspHeaderName('X-Request-Id')).toBe('x-psp-x-request-id');
    expect(passedOnPspHeaderName('Idempotent-Replayed')).toBe('x-psp-idempotent-replayed');
  });

  it('drops headers that would act on the gateway’s whole origin', () => {
    for (const name of [
      'Set-Cookie',
      'set-cookie2',
      'Access-Control-Allow-Origin',
      'access-control-allow-credentials',
      'Access-Control-Expose-Headers',
      'Strict-Transport-Security',
      'Clear-Site-Data',
      'Alt-Svc',
      'NEL',
      'Report-To',
      'Reporting-Endpoints',
    ]) {
      expect({ name, passedOn: passedOnPspHeaderName(name) }).toEqual({ name, passedOn: undefined });
    }
  });
});

import { Tessera, TesseraApiError } from '../../packages/sdk/src';
import { aCard, apiClient, useSharedStack } from './harness';

/**
 * A PSP's answer is passed through, but it must not pass for Tessera's own: headers Tessera uses
 * to speak for itself come back renamed, and headers that would act on the gateway's origin (which
 * also serves the dashboard) are dropped.
 */

jest.setTimeout(60_000);

const env = useSharedStack({ psp: true });
const acmeId = env.merchant('acme');

let apiKey: string;
let acme: ReturnType<typeof apiClient>;

beforeAll(() => {
  apiKey = env.stack.createKey(acmeId).apiKey;
  acme = apiClient(env.stack, apiKey);
});

beforeEach(() => env.psp.reset());

/** A PSP that declines and dresses its answer up as a Tessera error, with cookies and CORS for the gateway's origin. */
function impersonatingPsp(): void {
  env.psp.reply = (_req, res) => {
    res.writeHead(402, {
      'content-type': 'application/json',
      'x-tessera-error': 'api_key_invalid',
      'x-request-id': 'psp-request-1',
      'x-tessera-request-id': 'psp-request-1',
      'x-tessera-psp-ms': '999999.0',
      'idempotent-replayed': 'true',
      'set-cookie': ['tessera_admin=stolen; Path=/; HttpOnly', 'other=1'],
      'access-control-allow-origin': 'https://evil.example',
      'access-control-allow-credentials': 'true',
      'x-psp-decline': 'insufficient_funds',
    });
    res.end('{"error":{"type":"authentication_error","code":"api_key_invalid","message":"declined"}}');
  };
}

async function aToken(): Promise<string> {
  return (await acme('POST', '/v1/token', aCard({ cvv: undefined }))).body.token as string;
}

describe('PSP answers that imitate Tessera', () => {
  it('come back with Tessera’s own headers only: the PSP’s x-tessera-*, x-request-id and idempotent-replayed renamed x-psp-…, no cookies, no CORS', async () => {
    impersonatingPsp();
    const body = { method: 'post', token: await aToken(), pspUrl: `${env.psp.url}/charges`, pspBody: 'card=[CARD_NUMBER]' };
    const res = await acme('POST', '/v1/proxy', body, { 'x-request-id': 'merchant-request-1' });
    expect(res.status).toBe(402);
    expect(res.text).toContain('declined');
    expect(res.headers.get('x-tessera-error')).toBeNull();
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    expect(res.headers.get('x-request-id')).toBe('merchant-request-1');
    expect(res.headers.get('x-tessera-request-id')).toBe('merchant-request-1');
    expect(res.headers.get('x-tessera-psp-ms')).toMatch(/^\d+\.\d$/);
    expect(Number(res.headers.get('x-tessera-psp-ms'))).toBeLessThan(999999);
    expect(res.headers.getSetCookie()).toEqual([]);
    expect([...res.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
    // Kept for debugging, under names that cannot be mistaken for Tessera's.
    expect(res.headers.get('x-psp-x-tessera-error')).toBe('api_key_invalid');
    expect(res.headers.get('x-psp-x-request-id')).toBe('psp-request-1');
    expect(res.headers.get('x-psp-idempotent-replayed')).toBe('true');
    expect(res.headers.get('x-psp-decline')).toBe('insufficient_funds');
  });

  it('stay the PSP’s when replayed for the same Idempotency-Key', async () => {
    impersonatingPsp();
    const body = { method: 'post', token: await aToken(), pspUrl: `${env.psp.url}/charges`, pspBody: 'card=[CARD_NUMBER]' };
    await acme('POST', '/v1/proxy', body, { 'idempotency-key': 'imitation-1' });
    const replay = await acme('POST', '/v1/proxy', body, { 'idempotency-key': 'imitation-1' });
    expect(replay.status).toBe(402);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.headers.get('x-tessera-error')).toBeNull();
    expect(replay.headers.getSetCookie()).toEqual([]);
    expect(replay.headers.get('x-psp-x-tessera-error')).toBe('api_key_invalid');
    expect(env.psp.requests).toHaveLength(1);
  });

  it('are a PSP response to the SDK, not a TesseraApiError', async () => {
    impersonatingPsp();
    const tessera = new Tessera(apiKey, { baseUrl: `${env.stack.baseUrl}/v1`, timeoutMs: 20_000 });
    const token = await aToken();
    const answer = await tessera.proxy
      .forward({ method: 'post', token, pspUrl: `${env.psp.url}/charges`, pspBody: 'card=[CARD_NUMBER]' }, { requestId: 'sdk-request-1' })
      .catch((err: unknown) => err);
    expect(answer).not.toBeInstanceOf(TesseraApiError);
    expect(answer).toMatchObject({ status: 402, requestId: 'sdk-request-1' });
  });
});

import fs from 'node:fs';
import { aCard, apiClient, type ApiKey, TEST_CVV, useStack } from './harness';

/**
 * Issue 11, findings 3 and 8, through the real processes: a body that renders huge is refused
 * before the vault builds it (and before the CVV is consumed) without failing other merchants'
 * calls, and holder names are escaped for every JSON and XML content type.
 */
jest.setTimeout(180_000);

// Generous: the services share two cores with other test runs while these bodies are rendered.
const env = useStack({ env: { VAULT_TIMEOUT_MS: '15000', PROXY_TIMEOUT_MS: '60000' }, psp: true });

const FORM = 'application/x-www-form-urlencoded';
/** 200 × U+FFFF: the longest holder name the gateway takes, and 9 bytes per character once form-encoded. */
const WIDE_HOLDER = '\uffff'.repeat(200);
/** The red team's body: 975 KB of placeholders that form-encode to about 135 MB. */
const AMPLIFYING_BODY = `cvc=[CARD_CVV]&name=${'[CARD_HOLDER]'.repeat(75_000)}`;
/** Renders to about 1.98 MB: under the vault's 2 MiB cap, but a few of them exceed one gRPC message. */
const NEAR_CAP_BODY = `name=${'[CARD_HOLDER]'.repeat(1_100)}`;

type Call = ReturnType<typeof apiClient>;

async function tokenize(call: Call, overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await call('POST', '/v1/token', aCard(overrides));
  expect(res.status).toBe(201);
  return res.body.token as string;
}

function proxy(call: Call, token: string, pspUrl: string, pspBody: string, pspHeaders: Record<string, string>) {
  return call('POST', '/v1/proxy', { method: 'post', token, pspUrl, pspHeaders, pspBody });
}

/** The most resident memory the vault process has used since it started (VmHWM, in bytes). */
function vaultPeakRssBytes(): number {
  const status = fs.readFileSync(`/proc/${env.stack.vault.pid}/status`, 'utf8');
  const kb = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kb === undefined) throw new Error('no VmHWM in /proc/<vault>/status');
  return Number(kb) * 1024;
}

const MAX_VAULT_PEAK_RSS = 200 * 1024 * 1024;

beforeEach(() => env.psp.reset());

describe('render amplification (finding 3)', () => {
  let mallory: Call;

  beforeAll(() => {
    mallory = apiClient(env.stack, env.stack.createKey('mallory', 'test').apiKey);
  });

  it('refuses a body that would render past the cap with 422 rendered_body_too_large, keeps the CVV, and the vault stays small', async () => {
    const token = await tokenize(mallory, { holderName: WIDE_HOLDER });
    const res = await proxy(mallory, token, `${env.psp.url}/charge`, AMPLIFYING_BODY, { 'content-type': FORM });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'rendered_body_too_large', param: 'pspBody' });
    expect(env.psp.requests).toHaveLength(0);

    // The CVV was not consumed by the refused call: a normal call still sends it.
    const ok = await proxy(mallory, token, `${env.psp.url}/charge`, 'cvc=[CARD_CVV]&name=[CARD_HOLDER]', { 'content-type': FORM });
    expect(ok.status).toBe(200);
    const sent = new URLSearchParams(env.psp.requests[0]!.body.toString('utf8'));
    expect(sent.get('cvc')).toBe(TEST_CVV);
    expect(sent.get('name')).toBe(WIDE_HOLDER);

    expect(vaultPeakRssBytes()).toBeLessThan(MAX_VAULT_PEAK_RSS);
  });

  it("other merchants' calls in the same batch window succeed, with their CVVs delivered, while one merchant sends oversized bodies", async () => {
    const merchants = ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7'];
    const keys: Record<string, ApiKey> = Object.fromEntries(merchants.map((m) => [m, env.stack.createKey(m, 'test')]));
    const clients: Record<string, Call> = Object.fromEntries(merchants.map((m) => [m, apiClient(env.stack, keys[m]!.apiKey)]));
    const wide = await tokenize(mallory, { holderName: WIDE_HOLDER });

    for (let round = 0; round < 3; round++) {
      env.psp.reset();
      const tokens = Object.fromEntries(await Promise.all(merchants.map(async (m) => [m, await tokenize(clients[m]!)] as const)));
      const attacker = [
        proxy(mallory, wide, `${env.psp.url}/mallory/huge`, AMPLIFYING_BODY, { 'content-type': FORM }),
        ...Array.from({ length: 7 }, (_, i) =>
          proxy(mallory, wide, `${env.psp.url}/mallory/near-cap-${i}`, NEAR_CAP_BODY, { 'content-type': FORM }),
        ),
      ];
      const honest = merchants.map((m) =>
        proxy(clients[m]!, tokens[m]!, `${env.psp.url}/${m}/charge`, JSON.stringify({ merchant: m, cvc: '[CARD_CVV]' }), {
          'content-type': 'application/json',
        }),
      );
      const [attackResults, honestResults] = await Promise.all([Promise.all(attacker), Promise.all(honest)]);

      expect(honestResults.map((r) => r.status)).toEqual(merchants.map(() => 200));
      for (const m of merchants) {
        const received = env.psp.requests.find((r) => r.url === `/${m}/charge`);
        expect(received && JSON.parse(received.body.toString('utf8'))).toEqual({ merchant: m, cvc: TEST_CVV });
      }
      const [huge, ...nearCap] = attackResults;
      expect(huge!.body.error?.code).toBe('rendered_body_too_large');
      // Bodies under the cap are legitimate, however many arrive together.
      expect(nearCap.map((r) => r.status)).toEqual(nearCap.map(() => 200));
      expect(env.psp.requests.some((r) => r.url === '/mallory/huge')).toBe(false);
    }
    expect(vaultPeakRssBytes()).toBeLessThan(MAX_VAULT_PEAK_RSS);
  });
});

describe('holder name encoding (finding 8)', () => {
  const HOLDER = 'Zoë "Q" O\'Brien \\ <b>&amp;</b>';
  let call: Call;
  let token: string;

  beforeAll(async () => {
    call = apiClient(env.stack, env.stack.createKey('acme', 'test').apiKey);
    token = await tokenize(call, { holderName: HOLDER });
  });

  it.each(['application/vnd.api+json', 'text/json', 'application/x-json', 'text/x-json; charset=utf-8'])(
    'JSON-escapes the holder name for %p, so the PSP gets valid JSON holding exactly the name',
    async (contentType) => {
      const pspBody = '{"data":{"attributes":{"name":"[CARD_HOLDER]","number":"[CARD_NUMBER]"}}}';
      const res = await proxy(call, token, `${env.psp.url}/charge`, pspBody, { 'Content-Type': contentType });
      expect(res.status).toBe(200);
      expect(JSON.parse(env.psp.requests[0]!.body.toString('utf8'))).toEqual({
        data: { attributes: { name: HOLDER, number: '4242424242424242' } },
      });
    },
  );

  it.each(['application/xml', 'text/xml', 'application/soap+xml; charset=utf-8'])(
    'escapes the holder name as XML text for %p',
    async (contentType) => {
      const res = await proxy(call, token, `${env.psp.url}/charge`, '<card><name>[CARD_HOLDER]</name></card>', {
        'content-type': contentType,
      });
      expect(res.status).toBe(200);
      expect(env.psp.requests[0]!.body.toString('utf8')).toBe(
        '<card><name>Zoë &quot;Q&quot; O&apos;Brien \\ &lt;b&gt;&amp;amp;&lt;/b&gt;</name></card>',
      );
    },
  );

  it('refuses two Content-Type headers that differ only in case with 400 on pspHeaders, and sends nothing', async () => {
    const res = await proxy(call, token, `${env.psp.url}/charge`, '{"name":"[CARD_HOLDER]"}', {
      'content-type': 'text/plain',
      'Content-Type': 'application/json',
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'parameter_invalid', param: 'pspHeaders' });
    expect(env.psp.requests).toHaveLength(0);
  });

  it('refuses [CARD_HOLDER] in a multipart body with 400 placeholder_not_encodable, keeping the CVV; digits still fill in', async () => {
    const cvvToken = await tokenize(call);
    const multipart = '--x\r\nContent-Disposition: form-data; name="name"\r\n\r\n[CARD_HOLDER]\r\n--x\r\n';
    const headers = { 'content-type': 'multipart/form-data; boundary=x' };
    const refused = await proxy(call, cvvToken, `${env.psp.url}/charge`, `${multipart}[CARD_CVV]`, headers);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'placeholder_not_encodable', param: 'pspBody' });
    expect(env.psp.requests).toHaveLength(0);

    const digits = '--x\r\nContent-Disposition: form-data; name="cvc"\r\n\r\n[CARD_CVV]\r\n--x--\r\n';
    const ok = await proxy(call, cvvToken, `${env.psp.url}/charge`, digits, headers);
    expect(ok.status).toBe(200);
    expect(env.psp.requests[0]!.body.toString('utf8')).toBe(digits.replace('[CARD_CVV]', TEST_CVV));
  });
});

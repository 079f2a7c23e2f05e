/**
 * PCI DSS 3.3.1.2 / 3.5: after a realistic run, the CVV is gone after its one use, and nothing
 * Redis wrote to disk (AOF and RDB) holds a PAN, a CVV, a holder name or an API key in clear.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { aCard, apiClient, type ApiKey, TEST_CARDS, TEST_CVV, useStack } from './harness';

jest.setTimeout(60_000);

// A stack of its own: the scan reads every byte Redis wrote, and on a shared stack other files'
// data (a request id or an order number of their choosing) can hold the CVV's three digits.
const env = useStack({ psp: true });

let key: ApiKey;
let call: ReturnType<typeof apiClient>;

beforeAll(async () => {
  key = env.stack.createKey('acme', 'test');
  call = apiClient(env.stack, key.apiKey);
});

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(full) : [full];
  });
}

/** A CVV in clear, delimited by anything that cannot be part of base64 or a longer number. */
function containsClearDigits(text: string, digits: string): boolean {
  return new RegExp(`(?<![A-Za-z0-9+/=])${digits}(?![A-Za-z0-9+/=])`).test(text);
}

describe('CVV lifecycle', () => {
  it('substitutes the CVV once; the next render that needs it answers 422 cvv_unavailable', async () => {
    const created = await call('POST', '/v1/token', aCard());
    expect(created.status).toBe(201);
    const { token } = created.body as { token: string };
    expect((await call('GET', `/v1/token/${token}`)).body.cvvAvailable).toBe(true);

    const first = await call('POST', '/v1/proxy', {
      method: 'post',
      token,
      pspUrl: `${env.psp.url}/charge`,
      pspBody: '{"cvc":"[CARD_CVV]"}',
    });
    expect(first.status).toBe(200);
    expect(JSON.parse(env.psp.requests[0]!.body.toString('utf8'))).toEqual({ cvc: TEST_CVV });
    expect((await call('GET', `/v1/token/${token}`)).body.cvvAvailable).toBe(false);

    const second = await call('POST', '/v1/proxy', {
      method: 'post',
      token,
      pspUrl: `${env.psp.url}/charge`,
      pspBody: '{"cvc":"[CARD_CVV]"}',
    });
    expect(second.status).toBe(422);
    expect(second.body.error.code).toBe('cvv_unavailable');
    expect(env.psp.requests).toHaveLength(1);

    // The card itself stays usable for CVV-less (merchant-initiated) charges.
    const mit = await call('POST', '/v1/proxy', {
      method: 'post',
      token,
      pspUrl: `${env.psp.url}/charge`,
      pspBody: '{"n":"[CARD_NUMBER]"}',
    });
    expect(mit.status).toBe(200);
  });
});

describe("Redis's files on disk", () => {
  it('hold the tokens but no PAN, CVV, holder name or API key in clear (AOF and RDB)', async () => {
    const tokens: string[] = [];
    for (const number of [TEST_CARDS.visa, TEST_CARDS.mastercard, TEST_CARDS.visaDeclined]) {
      const res = await call('POST', '/v1/token', aCard({ number, holderName: 'Grace Brewster Hopper' }));
      expect(res.status).toBe(201);
      tokens.push(res.body.token as string);
    }
    const amex = await call('POST', '/v1/token', aCard({ number: TEST_CARDS.amex, cvv: '0461', holderName: 'Grace Brewster Hopper' }));
    tokens.push(amex.body.token as string);
    await call('POST', '/v1/proxy', {
      method: 'post',
      token: tokens[0],
      pspUrl: `${env.psp.url}/charge`,
      pspBody: '{"n":"[CARD_NUMBER]","c":"[CARD_CVV]"}',
    });

    // An RDB snapshot too, not only the append-only file the harness' redis writes.
    const admin = new Redis(env.redis.url);
    try {
      // Uncompressed, so a value stored in clear could not hide inside LZF-compressed bytes.
      await admin.config('SET', 'rdbcompression', 'no');
      await admin.save();
    } finally {
      admin.disconnect();
    }

    const files = filesUnder(env.redis.dir);
    expect(files.some((f) => f.endsWith('.rdb'))).toBe(true);
    expect(files.some((f) => f.includes('.aof'))).toBe(true);
    const onDisk = files.map((f) => fs.readFileSync(f).toString('latin1')).join('\n');
    // The scan looks at the right data: the tokens are there.
    for (const token of tokens) expect(onDisk).toContain(token);

    for (const pan of Object.values(TEST_CARDS)) expect(onDisk.includes(pan)).toBe(false);
    expect(containsClearDigits(onDisk, TEST_CVV)).toBe(false);
    expect(containsClearDigits(onDisk, '0461')).toBe(false);
    expect(onDisk).not.toContain('Grace Brewster Hopper');
    expect(onDisk).not.toContain('Ada Lovelace');
    expect(onDisk).not.toContain(key.apiKey);
  });
});

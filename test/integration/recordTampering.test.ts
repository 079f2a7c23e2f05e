/**
 * Issue 11, finding 5: a used or expired CVV can be brought back, and a card record's clear
 * metadata decides who may read or delete it. An insider with write access to the card store
 * copies records and writes them back, or edits their clear fields, against the real services
 * with two vault replicas (the CVV taken on one replica, the copy presented to either).
 */
import Redis from 'ioredis';
import { waitFor } from '@tessera/stack';
import { aCard, apiClient, findCardDataInLogs, type ManagedProcess, TEST_CARDS, TEST_CVV, useStack } from './harness';
import { editRecord } from '../../services/vault/src/test/builders';

jest.setTimeout(90_000);

/** Short enough to wait out in a test; long enough for one proxy call right after tokenizing. */
const CVV_TTL_SECONDS = 5;

const env = useStack({ psp: true, vaultReplicas: 2, env: { CVV_TTL_SECONDS: String(CVV_TTL_SECONDS), METRICS_PORT: '0' } });

let redis: Redis;
let asAcme: ReturnType<typeof apiClient>;
let asAcmeLive: ReturnType<typeof apiClient>;
let asRival: ReturnType<typeof apiClient>;

beforeAll(() => {
  redis = new Redis(env.redis.url);
  asAcme = apiClient(env.stack, env.stack.createKey('acme').apiKey);
  asAcmeLive = apiClient(env.stack, env.stack.createKey('acme', 'live').apiKey);
  asRival = apiClient(env.stack, env.stack.createKey('rival').apiKey);
});

afterAll(() => redis.disconnect());

beforeEach(() => env.psp.reset());

const cardKey = (token: string): string => `tessera:card:{${token}}`;
const cvvKey = (token: string): string => `tessera:cvv:{${token}}`;

function charge(token: string): Record<string, unknown> {
  return {
    method: 'post',
    token,
    pspUrl: `${env.psp.url}/v1/charges`,
    pspHeaders: { 'content-type': 'application/json' },
    pspBody: JSON.stringify({ number: '[CARD_NUMBER]', cvc: '[CARD_CVV]' }),
  };
}

async function tokenize(): Promise<string> {
  const res = await asAcme('POST', '/v1/token', aCard());
  expect(res.status).toBe(201);
  return res.body.token as string;
}

/** Every vault replica's output: the alarm is logged by whichever replica served the call. */
function vaultLogs(): string {
  return env.stack.vaults.map((vault) => vault.output).join('\n');
}

/** tessera_vault_record_alarms_total{alarm} summed over the replicas. */
async function alarmCount(alarm: string): Promise<number> {
  let total = 0;
  for (const vault of env.stack.vaults) total += sampleOf(await scrape(vault), alarm);
  return total;
}

async function scrape(service: ManagedProcess): Promise<string> {
  const url = /"url":"(http:\/\/127\.0\.0\.1:\d+\/metrics)"/.exec(service.output)?.[1];
  if (url === undefined) throw new Error(`${service.name} logged no metrics URL`);
  return (await fetch(url)).text();
}

function sampleOf(text: string, alarm: string): number {
  return text
    .split('\n')
    .filter((line) => line.startsWith('tessera_vault_record_alarms_total{') && line.includes(`alarm="${alarm}"`))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

/** The warn line a replica wrote for this alarm on this token. */
function loggedAlarm(alarm: string, token: string): Record<string, unknown> | undefined {
  for (const line of vaultLogs().split('\n')) {
    if (!line.includes(token) || !line.includes(alarm)) continue;
    const parsed = JSON.parse(line) as Record<string, unknown>;
    if (parsed.alarm === alarm && parsed.token === token) return parsed;
  }
  return undefined;
}

/**
 * The alarm's line, waited for: the vault writes it before it answers, but the line reaches the
 * test through a pipe that a loaded machine can leave behind the answer.
 */
async function alarmLine(alarm: string, token: string): Promise<Record<string, unknown> | undefined> {
  await waitFor(() => loggedAlarm(alarm, token) !== undefined, `the vault's ${alarm} line`, 5_000).catch(() => undefined);
  return loggedAlarm(alarm, token);
}

function expectCvvUnavailable(res: { status: number; body: any; headers: Headers }): void {
  expect(res.status).toBe(422);
  expect(res.headers.get('x-tessera-error')).toBe('cvv_unavailable');
  expect(res.body.error.code).toBe('cvv_unavailable');
}

describe('a CVV cannot be brought back', () => {
  it('refuses a CVV record copied before its use and written back after: 422 cvv_unavailable, the PSP receives no CVV', async () => {
    const token = await tokenize();
    const copy = (await redis.getBuffer(cvvKey(token))) as Buffer;
    const ttlMs = await redis.pttl(cvvKey(token));
    expect(copy.length).toBeGreaterThan(0);

    const first = await asAcme('POST', '/v1/proxy', charge(token));
    expect(first.status).toBe(200);
    expect(JSON.parse(env.psp.requests[0]!.body.toString('utf8'))).toEqual({ number: TEST_CARDS.visa, cvc: TEST_CVV });
    expect(await redis.exists(cvvKey(token))).toBe(0);

    // The insider restores the copy, TTL and all; GET even shows the CVV as available again.
    await redis.set(cvvKey(token), copy, 'PX', ttlMs);
    const before = await alarmCount('cvv_replayed');
    // Two attempts: with round_robin over two replicas, each replica gets to judge the copy.
    for (let attempt = 0; attempt < 2; attempt++) {
      expectCvvUnavailable(await asAcme('POST', '/v1/proxy', charge(token)));
      await redis.set(cvvKey(token), copy, 'PX', ttlMs);
    }
    expect(env.psp.requests).toHaveLength(1);
    expect(await alarmLine('cvv_replayed', token)).toMatchObject({ level: 40, record: 'cvv' });
    expect((await alarmCount('cvv_replayed')) - before).toBe(2);
    // The card itself still works without a CVV.
    const withoutCvv = await asAcme('POST', '/v1/proxy', { ...charge(token), pspBody: '[CARD_NUMBER]' });
    expect(withoutCvv.status).toBe(200);
  });

  it('refuses a CVV record restored without a TTL after it expired: 422 cvv_unavailable, the PSP receives nothing', async () => {
    const token = await tokenize();
    const copy = (await redis.getBuffer(cvvKey(token))) as Buffer;
    const deadline = Date.now() + (CVV_TTL_SECONDS + 20) * 1000;
    while ((await redis.exists(cvvKey(token))) === 1) {
      if (Date.now() > deadline) throw new Error('the CVV record did not expire');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect((await asAcme('GET', `/v1/token/${token}`)).body.cvvAvailable).toBe(false);
    // Restored with no TTL at all: only the deadline sealed into the record can refuse it now.
    await redis.set(cvvKey(token), copy);
    expectCvvUnavailable(await asAcme('POST', '/v1/proxy', charge(token)));
    expect(env.psp.requests).toHaveLength(0);
    expect(await alarmLine('cvv_expired', token)).toMatchObject({ level: 40, record: 'cvv' });
    expect(await redis.exists(cvvKey(token))).toBe(0);
  });
});

describe('card metadata is authenticated', () => {
  async function edit(token: string, change: (record: Record<string, unknown>) => Record<string, unknown>): Promise<void> {
    await editRecord(redis, cardKey(token), change);
  }

  function expectNotFound(res: { status: number; body: any }): void {
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('token_not_found');
  }

  it('a card record whose merchant was edited to another merchant is 404 for that merchant on GET and DELETE, and stays in the store', async () => {
    const token = await tokenize();
    await edit(token, (record) => ({ ...record, merchantId: 'rival' }));

    expectNotFound(await asRival('GET', `/v1/token/${token}`));
    expectNotFound(await asRival('DELETE', `/v1/token/${token}`));
    expectNotFound(await asRival('POST', '/v1/proxy', charge(token)));
    expect(await redis.exists(cardKey(token))).toBe(1);
    expect(await redis.exists(cvvKey(token))).toBe(1);
    // The owner cannot use a record that no longer proves its fields either (it no longer names them).
    expectNotFound(await asAcme('GET', `/v1/token/${token}`));
    expect(env.psp.requests).toHaveLength(0);
    expect(await alarmLine('authentication_failed', token)).toMatchObject({ level: 40, record: 'card' });
  });

  it.each([
    ['mode', { mode: 'live' }, () => asAcmeLive],
    ['last4', { last4: '0000' }, () => asAcme],
    ['expiry', { expiryMonth: 1, expiryYear: 2099 }, () => asAcme],
  ] as const)(
    'a card record whose %s was edited is answered 404 on GET and DELETE, never with the edited fields',
    async (_what, change, caller) => {
      const token = await tokenize();
      await edit(token, (record) => ({ ...record, ...change }));
      expectNotFound(await caller()('GET', `/v1/token/${token}`));
      expectNotFound(await caller()('DELETE', `/v1/token/${token}`));
      expect(await redis.exists(cardKey(token))).toBe(1);
      expect(await alarmLine('authentication_failed', token)).toBeDefined();
    },
  );

  it('writes no card number or CVV to any service log', () => {
    expect(findCardDataInLogs(env.stack.logs(), [TEST_CARDS.visa], [TEST_CVV])).toEqual([]);
  });
});

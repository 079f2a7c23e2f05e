import crypto from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { constructEvent, signWebhookPayload, WebhookSignatureError, type WebhookSignatureFailureReason } from './webhooks';

const SECRET = 'whsec_' + 'a'.repeat(43);
const OLD_SECRET = 'whsec_' + 'b'.repeat(43);
const NOW = new Date('2026-11-26T12:00:00Z');
const TS = Math.floor(NOW.getTime() / 1000);
const BODY = JSON.stringify({ id: 'evt_1', type: 'token.created', created: TS, mode: 'test', data: { object: { token: 'tok_1' } } });

/** Signed here independently of the SDK: HMAC-SHA256 over "<t>.<body>". */
const hmac = (body: string, t = TS, secret = SECRET) => crypto.createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');

const reasonOf = (run: () => unknown): WebhookSignatureFailureReason | undefined => {
  try {
    run();
  } catch (error) {
    if (error instanceof WebhookSignatureError) return error.reason;
    throw error;
  }
  return undefined;
};

describe('webhooks.constructEvent', () => {
  it('returns the event of a delivery signed with the secret, from a string or a Buffer', () => {
    const header = `t=${TS},v1=${hmac(BODY)}`;
    expect(constructEvent(BODY, header, SECRET, { now: NOW })).toMatchObject({ id: 'evt_1', type: 'token.created' });
    expect(constructEvent(Buffer.from(BODY), header, SECRET, { now: NOW })).toMatchObject({ data: { object: { token: 'tok_1' } } });
  });

  it('accepts either secret while one is rotated (several v1 entries, any matching one)', () => {
    const header = signWebhookPayload([SECRET, OLD_SECRET], BODY, TS);
    expect(header).toBe(`t=${TS},v1=${hmac(BODY)},v1=${hmac(BODY, TS, OLD_SECRET)}`);
    expect(constructEvent(BODY, header, SECRET, { now: NOW }).id).toBe('evt_1');
    expect(constructEvent(BODY, header, OLD_SECRET, { now: NOW }).id).toBe('evt_1');
    expect(reasonOf(() => constructEvent(BODY, header, 'whsec_other', { now: NOW }))).toBe('signature_mismatch');
  });

  it.each<[string, unknown, unknown, unknown, WebhookSignatureFailureReason]>([
    ['no header', BODY, undefined, SECRET, 'header_missing'],
    ['an empty header', BODY, ' ', SECRET, 'header_missing'],
    ['a repeated header', BODY, ['t=1', 't=2'], SECRET, 'header_repeated'],
    ['a malformed header', BODY, 'garbage', SECRET, 'header_malformed'],
    ['no timestamp', BODY, `v1=${'0'.repeat(64)}`, SECRET, 'timestamp_invalid'],
    ['two timestamps', BODY, `t=${TS},t=${TS},v1=${hmac(BODY)}`, SECRET, 'timestamp_invalid'],
    ['no v1 signature', BODY, `t=${TS},v0=${hmac(BODY)}`, SECRET, 'no_v1_signature'],
    ['a changed body', BODY.replace('tok_1', 'tok_2'), `t=${TS},v1=${hmac(BODY)}`, SECRET, 'signature_mismatch'],
    ['another secret', BODY, `t=${TS},v1=${hmac(BODY, TS, 'whsec_x')}`, SECRET, 'signature_mismatch'],
    ['an old delivery', BODY, `t=${TS - 301},v1=${hmac(BODY, TS - 301)}`, SECRET, 'timestamp_too_old'],
    ['a delivery from the future', BODY, `t=${TS + 120},v1=${hmac(BODY, TS + 120)}`, SECRET, 'timestamp_in_future'],
    ['a body that is not JSON', 'nope', `t=${TS},v1=${hmac('nope')}`, SECRET, 'body_not_json'],
    ['a parsed body', JSON.parse(BODY), `t=${TS},v1=${hmac(BODY)}`, SECRET, 'body_not_raw'],
    ['a missing secret', BODY, `t=${TS},v1=${hmac(BODY)}`, undefined, 'secret_missing'],
    ['an empty secret', BODY, `t=${TS},v1=${hmac(BODY)}`, '', 'secret_missing'],
  ])('refuses %s with a WebhookSignatureError and its reason', (_name, body, header, secret, reason) => {
    const run = () => constructEvent(body as string, header as string, secret as string, { now: NOW });
    expect(run).toThrow(WebhookSignatureError);
    expect(reasonOf(run)).toBe(reason);
  });

  it('says what to do about a parsed body and never repeats the secret in a message', () => {
    const run = () => constructEvent(JSON.parse(BODY) as string, `t=${TS},v1=${hmac(BODY)}`, SECRET, { now: NOW });
    expect(run).toThrow(/raw request body/);
    try {
      constructEvent(BODY, `t=${TS},v1=${hmac(BODY, TS, 'whsec_x')}`, SECRET, { now: NOW });
    } catch (error) {
      expect(String((error as Error).message)).not.toContain(SECRET);
    }
  });

  it('honours toleranceSeconds', () => {
    const old = `t=${TS - 1000},v1=${hmac(BODY, TS - 1000)}`;
    expect(reasonOf(() => constructEvent(BODY, old, SECRET, { now: NOW }))).toBe('timestamp_too_old');
    expect(constructEvent(BODY, old, SECRET, { now: NOW, toleranceSeconds: 1200 }).id).toBe('evt_1');
  });

  it('refuses any change to the body, the timestamp or the signature (property)', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.integer({ min: -300, max: 60 }),
        fc.oneof(
          fc.record({ kind: fc.constant('body' as const), extra: fc.string({ minLength: 1 }) }),
          fc.record({ kind: fc.constant('t' as const), delta: fc.integer({ min: -300, max: 60 }).filter((d) => d !== 0) }),
          fc.record({ kind: fc.constant('sig' as const), at: fc.nat({ max: 63 }), nibble: fc.integer({ min: 1, max: 15 }) }),
        ),
        (body, age, change) => {
          const t = TS + age;
          const signature = hmac(body, t);
          expect(constructEvent(JSON.stringify(body), `t=${t},v1=${hmac(JSON.stringify(body), t)}`, SECRET, { now: NOW })).toBe(body);
          let sentBody = body;
          let sentT = t;
          let sentSignature = signature;
          if (change.kind === 'body') sentBody = body + change.extra;
          if (change.kind === 't') sentT = t + change.delta;
          if (change.kind === 'sig') {
            const flipped = (parseInt(signature[change.at] as string, 16) ^ change.nibble).toString(16);
            sentSignature = signature.slice(0, change.at) + flipped + signature.slice(change.at + 1);
          }
          const reason = reasonOf(() => constructEvent(sentBody, `t=${sentT},v1=${sentSignature}`, SECRET, { now: NOW }));
          expect(reason).toBe('signature_mismatch');
        },
      ),
    );
  });

  const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
  (hasOpenssl ? it : it.skip)('matches the openssl shell line in docs/webhooks.md', () => {
    // The line of docs/webhooks.md, "Verifying signatures", run as written.
    const shell = `printf '%s.%s' "$t" "$body" | openssl dgst -sha256 -hmac "$secret"`;
    const output = execFileSync('sh', ['-c', shell], {
      env: { PATH: process.env.PATH, t: String(TS), body: BODY, secret: SECRET },
    }).toString();
    const hex = /([0-9a-f]{64})\s*$/.exec(output.trim())?.[1];
    expect(hex).toBe(hmac(BODY));
    expect(constructEvent(BODY, `t=${TS},v1=${hex}`, SECRET, { now: NOW }).id).toBe('evt_1');
  });
});

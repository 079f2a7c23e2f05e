import { EVENT_TYPES } from './eventTypes';
import { buildEvent, EVENT_ID_PATTERN, EVENT_OBJECT_SCHEMAS } from './events';

const PAN = '4242424242424242';

describe('event records', () => {
  it('build with an evt_ id, unix seconds and the parsed object', () => {
    const event = buildEvent({
      type: 'token.created',
      merchantId: 'm_1',
      mode: 'test',
      object: { id: 'tok_abcdefgh', brand: 'visa', last4: '4242', expiryMonth: 12, expiryYear: 2030 },
      now: new Date('2026-11-26T00:00:00Z'),
    });
    expect(event.id).toMatch(EVENT_ID_PATTERN);
    expect(event.created).toBe(Date.UTC(2026, 10, 26) / 1000);
    expect(event.data.object).toEqual({ id: 'tok_abcdefgh', brand: 'visa', last4: '4242', expiryMonth: 12, expiryYear: 2030 });
  });

  it('never let a PAN-like value pass any schema, in any field', () => {
    for (const type of EVENT_TYPES) {
      const schema = EVENT_OBJECT_SCHEMAS[type];
      for (const object of [
        { id: PAN },
        { id: `tok_${PAN}` },
        { id: 'tok_abcdefgh', number: PAN },
        { id: 'tok_abcdefgh', pan: PAN, status: 'completed', kind: 'secret', mode: 'test' },
        { id: 'tok_abcdefgh', brand: `visa ${PAN}`, status: `x${PAN}`, kind: PAN, mode: 'test' },
        { id: 'tok_abcdefgh', last4: PAN },
      ]) {
        expect(schema.safeParse(object).success).toBe(false);
      }
      expect(() => buildEvent({ type, merchantId: 'm_1', mode: 'test', object: { id: `tok_${PAN}` } })).toThrow(/schema/);
    }
  });

  it('take a token id as the vault issues it (tok. + base64url) for token objects only, never one hiding a card number', () => {
    const vaultToken = 'tok.Xq3_vB-9kLmN0pQrStUvWxYz01AbCdEf';
    for (const type of ['token.created', 'token.updated', 'token.retained', 'token.deleted', 'token.expiring_soon'] as const) {
      expect(EVENT_OBJECT_SCHEMAS[type].safeParse({ id: vaultToken }).success).toBe(true);
      expect(EVENT_OBJECT_SCHEMAS[type].safeParse({ id: `tok.${PAN}` }).success).toBe(false);
      expect(EVENT_OBJECT_SCHEMAS[type].safeParse({ id: `tok.abc-${PAN}-xyz` }).success).toBe(false);
      expect(EVENT_OBJECT_SCHEMAS[type].safeParse({ id: 'tok.short' }).success).toBe(false);
      expect(EVENT_OBJECT_SCHEMAS[type].safeParse({ id: `${vaultToken}.x` }).success).toBe(false);
    }
    expect(EVENT_OBJECT_SCHEMAS['form_session.completed'].safeParse({ id: vaultToken, status: 'completed' }).success).toBe(false);
    // A CVV that expired unused is named by its token.
    expect(EVENT_OBJECT_SCHEMAS['cvv.expired_unused'].safeParse({ id: vaultToken }).success).toBe(true);
    expect(EVENT_OBJECT_SCHEMAS['cvv.expired_unused'].safeParse({ id: `tok.abc-${PAN}-xyz` }).success).toBe(false);
  });

  it('refuse a CVV-bearing or key-bearing object', () => {
    expect(EVENT_OBJECT_SCHEMAS['token.created'].safeParse({ id: 'tok_abcdefgh', cvv: '123' }).success).toBe(false);
    expect(
      EVENT_OBJECT_SCHEMAS['api_key.created'].safeParse({ id: 'key_abcdefgh', kind: 'secret', mode: 'test', key: 'tsk_x' }).success,
    ).toBe(false);
  });
});

describe('form_session.completed, card_testing.suspected and token ids', () => {
  it('takes the token, brand, last4 and payment outcome of a completed session, and a tok. id', () => {
    const object = {
      id: 'fs_abcdefgh',
      status: 'completed',
      token: 'tok.AbCdEfGhIjKlMnOpQrSt',
      brand: 'visa',
      last4: '4242',
      payment: 'unknown',
    };
    expect(buildEvent({ type: 'form_session.completed', merchantId: 'm_1', mode: 'test', object }).data.object).toEqual(object);
    const token = { id: 'tok.AbCdEfGhIjKlMnOpQrSt', brand: 'visa', last4: '4242', expiryMonth: 1, expiryYear: 2030 };
    expect(buildEvent({ type: 'token.expiring_soon', merchantId: 'm_1', mode: 'test', object: token }).data.object).toEqual(token);
  });

  it('refuses a completed session whose token or status could carry a card number, or that is not completed', () => {
    const PAN = '4242424242424242';
    for (const object of [
      { id: 'fs_abcdefgh', status: 'completed', token: `tok.${PAN}` },
      { id: 'fs_abcdefgh', status: 'open' },
      { id: 'fs_abcdefgh', status: 'completed', payment: 'charged' },
    ]) {
      expect(() => buildEvent({ type: 'form_session.completed', merchantId: 'm_1', mode: 'test', object })).toThrow(/schema/);
    }
  });

  it('names the key that tripped the card-testing guard by id', () => {
    const object = { keyId: 'key_abcdefgh', attempts: 31, windowSeconds: 300 };
    expect(buildEvent({ type: 'card_testing.suspected', merchantId: 'm_1', mode: 'live', object }).data.object).toEqual(object);
  });
});

import { decideCharge } from './charges';

const now = new Date('2026-11-23T00:00:00Z');
const attempt = (number: string) => ({ amount: 1000, currency: 'EUR', number, expMonth: 12, expYear: 2030, cvc: '123' });

describe('sandbox charge decisions', () => {
  it.each(['4242424242424242', '5555555555554444', '378282246310005'])('approves the success card %s', (number) => {
    const answer = decideCharge(attempt(number), now);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: 'succeeded', amount: 1000, currency: 'eur', card: { last4: number.slice(-4) } });
  });

  it('declines the declined test card with a card_error', () => {
    const answer = decideCharge(attempt('4000000000000002'), now);
    expect(answer.status).toBe(402);
    expect(answer.body).toMatchObject({ error: { type: 'card_error', code: 'card_declined', decline_code: 'generic_decline' } });
  });

  it('refuses cards that are not test cards and never echoes the number', () => {
    const answer = decideCharge(attempt('4111111111111111'), now);
    expect(answer.status).toBe(402);
    expect(JSON.stringify(answer.body)).not.toContain('4111111111111111');
  });

  it('rejects a missing amount', () => {
    expect(decideCharge({ ...attempt('4242424242424242'), amount: undefined }, now).status).toBe(400);
  });
});

import { randomBytes } from 'node:crypto';
import { detectBrand, isLuhnValid, testCardOutcome } from '@tessera/common';

export interface ChargeAttempt {
  amount?: unknown;
  currency?: unknown;
  number?: unknown;
  expMonth?: unknown;
  expYear?: unknown;
  cvc?: unknown;
}

export interface SandboxAnswer {
  status: number;
  body: Record<string, unknown>;
}

const declined = (code: string, message: string, extra: Record<string, unknown> = {}): SandboxAnswer => ({
  status: 402,
  body: { error: { type: 'card_error', code, message, ...extra } },
});

const invalidParameter = (param: string, message: string): SandboxAnswer => ({
  status: 400,
  body: { error: { type: 'invalid_request_error', code: 'parameter_invalid', param, message } },
});

/**
 * Decides a sandbox charge the way a card-acquiring PSP would, for the published test cards
 * only: success cards are approved, 4000000000000002 is declined.
 */
export function decideCharge(attempt: ChargeAttempt, now: Date = new Date()): SandboxAnswer {
  const amount = Number(attempt.amount);
  if (!Number.isInteger(amount) || amount <= 0) {
    return invalidParameter('amount', 'amount must be a positive integer in the smallest currency unit.');
  }
  const currency =
    typeof attempt.currency === 'string' && /^[a-zA-Z]{3}$/.test(attempt.currency) ? attempt.currency.toLowerCase() : undefined;
  if (!currency) {
    return invalidParameter('currency', 'currency must be a three-letter ISO code.');
  }
  const number = typeof attempt.number === 'string' ? attempt.number : '';
  if (!isLuhnValid(number)) return declined('incorrect_number', 'The card number is incorrect.');
  const expMonth = Number(attempt.expMonth);
  const expYear = Number(attempt.expYear);
  const currentMonth = now.getUTCFullYear() * 12 + now.getUTCMonth() + 1;
  if (!Number.isInteger(expMonth) || !Number.isInteger(expYear) || expYear * 12 + expMonth < currentMonth) {
    return declined('expired_card', 'The card has expired.');
  }
  if (attempt.cvc !== undefined && !/^\d{3,4}$/.test(String(attempt.cvc))) {
    return declined('incorrect_cvc', "The card's security code is incorrect.");
  }
  const outcome = testCardOutcome(number);
  if (outcome === undefined) {
    return declined('card_not_supported', 'The sandbox accepts only the published test cards.');
  }
  const id = `ch_sandbox_${randomBytes(12).toString('hex')}`;
  const card = { brand: detectBrand(number), last4: number.slice(-4) };
  if (outcome === 'decline') {
    return declined('card_declined', 'Your card was declined.', { decline_code: 'generic_decline', charge: id });
  }
  return {
    status: 200,
    body: { id, object: 'charge', status: 'succeeded', amount, currency, paid: true, card, created: Math.floor(now.getTime() / 1000) },
  };
}

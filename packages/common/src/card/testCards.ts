import type { Brand } from './brands';

export type TestCardOutcome = 'approve' | 'decline';

/** The published test cards; test API keys accept only these, live keys refuse them. */
export const TEST_CARDS: Readonly<Record<string, { brand: Brand; outcome: TestCardOutcome }>> = {
  '4242424242424242': { brand: 'visa', outcome: 'approve' },
  '5555555555554444': { brand: 'mastercard', outcome: 'approve' },
  '378282246310005': { brand: 'amex', outcome: 'approve' },
  '4000000000000002': { brand: 'visa', outcome: 'decline' },
};

export function isTestCard(digits: string): boolean {
  return Object.prototype.hasOwnProperty.call(TEST_CARDS, digits);
}

export function testCardOutcome(digits: string): TestCardOutcome | undefined {
  return isTestCard(digits) ? TEST_CARDS[digits]?.outcome : undefined;
}

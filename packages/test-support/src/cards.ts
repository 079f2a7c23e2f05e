/** Card fixtures and the scan of captured logs for card data (PCI DSS 3.3/3.4: never in a log). */

/**
 * CVVs with a leading zero cannot be confused with durations, ports or pids in a log line, so a
 * scan for them has no false positives.
 */
export const TEST_CVV = '046';
export const TEST_AMEX_CVV = '0461';

/** Card builders: fixtures are built, not pasted. */
export const TEST_CARDS = {
  visa: '4242424242424242',
  mastercard: '5555555555554444',
  amex: '378282246310005',
  visaDeclined: '4000000000000002',
} as const;

export function aCard(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    number: TEST_CARDS.visa,
    holderName: 'Ada Lovelace',
    expiryMonth: 12,
    expiryYear: new Date().getUTCFullYear() + 3,
    cvv: TEST_CVV,
    ...overrides,
  };
}

/**
 * Asserts that no card number (whole, or with spaces) and no CVV from the given cards appears
 * in the captured output. CVVs are matched as standalone digit groups (not inside ids or times).
 */
export function findCardDataInLogs(logs: string, pans: string[], cvvs: string[]): string[] {
  const found: string[] = [];
  for (const pan of pans) {
    const spaced = pan.replace(/(\d{4})(?=\d)/g, '$1 ');
    if (logs.includes(pan) || logs.includes(spaced)) found.push(`PAN ending ${pan.slice(-4)}`);
  }
  for (const cvv of cvvs) {
    const pattern = new RegExp(`(?<![\\w.:-])${cvv}(?![\\w.:-])`);
    if (pattern.test(logs)) found.push(`CVV ${cvv.length} digits`);
  }
  return found;
}

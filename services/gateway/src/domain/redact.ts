/** 12 or more digits, single spaces or hyphens between them allowed: long enough to be a card number. */
const CARD_NUMBER_LIKE = /\d(?:[ -]?\d){11,}/g;

/**
 * Replaces anything shaped like a card number in caller-supplied text that the gateway echoes
 * (an unknown field's name, a dry-run preview of a template the merchant wrote), so no answer
 * carries a PAN even when the caller put one where none belongs. Found by the REST fuzz test.
 */
export function redactCardNumbers(text: string): string {
  return text.replace(CARD_NUMBER_LIKE, '[redacted]');
}

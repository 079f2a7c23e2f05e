/**
 * The one card-number detector. Every string a client chose that Tessera echoes (error messages
 * and params, request ids, dry-run previews), logs or stores outside the vault (the detokenization
 * audit, idempotency keys, the request log) goes through it, so "what counts as a card number" is
 * decided once.
 *
 * Rule: a *run* is a sequence of ASCII digits in which neighbouring digits touch or are joined by a
 * short run of separators: one to MAX_SEPARATOR_RUN characters, each anything but an ASCII letter
 * or digit (space, -, _, ., /, :, ",", a tab, an emoji, …). `4242_4242_4242_4242`,
 * `4242  4242  4242  4242`, `4242, 4242, 4242, 4242`, `4242 - 4242 - …`, `4242-4242--4242-4242` and
 * Amex's `3782-822463-10005` are each one run. A run is card-number-like when any 12 to 19
 * consecutive digits of it pass the Luhn check: a PAN cannot hide behind a prefix
 * (`x94242424242424242`) or inside a longer number.
 *
 * Why any non-alphanumeric character and not a list (spaces, hyphens, dots, …): the caller picks the
 * spelling, and every list so far has been a list of misses (`_`, `·`, NBSP). Why at most three
 * in a row: a person or a form writes at most `" - "` or `", "` between groups, and a longer
 * gap is layout (a column, a new line of a table) between numbers that are separate; joining those
 * too would flag nearly every run of numbers in a log. A letter always ends a run.
 *
 * False positives are accepted: a run of 13 digits (an epoch in milliseconds) has three windows and
 * is flagged about a quarter of the time; a run of 19 or more almost always. Masking an order id in
 * an error message is cheap; letting a PAN through is not. The one exception is IPv4 addresses
 * (four dot-separated numbers up to 255, optionally with :port or /prefix), alone or in a list
 * (`203.0.113.7, 198.51.100.22` of X-Forwarded-For): `192.168.100.200` has 12 digits, and
 * addresses belong in logs.
 */
/** What a masked run becomes: the whole run, separators too, so no digit of it is left. */
export const CARD_NUMBER_MASK = '[redacted]';

const MIN_DIGITS = 12;
const MAX_DIGITS = 19;
/** The most separator characters that still join two digits into one run (see the rule above). */
export const MAX_SEPARATOR_RUN = 3;

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isAsciiAlphanumeric(c: number): boolean {
  return isDigit(c) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/**
 * Code units taken by the separators from `i` up to the next digit, when they are 1 to
 * MAX_SEPARATOR_RUN characters, none an ASCII letter (a surrogate pair is one character); else 0.
 */
function separatorRunWidth(text: string, i: number): number {
  let j = i;
  for (let characters = 0; characters < MAX_SEPARATOR_RUN && j < text.length; characters++) {
    const c = text.charCodeAt(j);
    if (isAsciiAlphanumeric(c)) return 0;
    j += c >= 0xd800 && c <= 0xdbff && j + 1 < text.length ? 2 : 1;
    if (j < text.length && isDigit(text.charCodeAt(j))) return j - i;
  }
  return 0;
}

const DOUBLED = [0, 2, 4, 6, 8, 1, 3, 5, 7, 9];

/**
 * Whether some window of 12-19 digits passes Luhn. Prefix sums by position parity make each window
 * O(1): the digit at p is doubled when its distance from the window's last digit is odd.
 */
function hasLuhnWindow(digits: Uint8Array, count: number): boolean {
  // plainEven[p]: the sum of the digits before p at even positions; doubledOdd[p]: of odd ones, doubled; …
  const plainEven = new Int32Array(count + 1);
  const plainOdd = new Int32Array(count + 1);
  const doubledEven = new Int32Array(count + 1);
  const doubledOdd = new Int32Array(count + 1);
  for (let p = 0; p < count; p++) {
    const d = digits[p] ?? 0;
    const even = p % 2 === 0;
    plainEven[p + 1] = (plainEven[p] ?? 0) + (even ? d : 0);
    plainOdd[p + 1] = (plainOdd[p] ?? 0) + (even ? 0 : d);
    doubledEven[p + 1] = (doubledEven[p] ?? 0) + (even ? (DOUBLED[d] ?? 0) : 0);
    doubledOdd[p + 1] = (doubledOdd[p] ?? 0) + (even ? 0 : (DOUBLED[d] ?? 0));
  }
  const span = (sums: Int32Array, start: number, end: number): number => (sums[end] ?? 0) - (sums[start] ?? 0);
  for (let length = MIN_DIGITS; length <= Math.min(MAX_DIGITS, count); length++) {
    for (let start = 0; start + length <= count; start++) {
      const end = start + length;
      // The last digit is never doubled, nor any of its parity; the others are.
      const lastEven = (end - 1) % 2 === 0;
      const sum = lastEven
        ? span(plainEven, start, end) + span(doubledOdd, start, end)
        : span(plainOdd, start, end) + span(doubledEven, start, end);
      if (sum % 10 === 0) return true;
    }
  }
  return false;
}

/**
 * A superset of "a run of 12 or more digits" (up to MAX_SEPARATOR_RUN separators between digits,
 * each possibly a surrogate pair of two code units), tested first: V8's regex engine rejects a
 * string about twice as fast as a JavaScript loop.
 */
const MAY_HAVE_LONG_RUN = /\d(?:[^A-Za-z0-9]{0,6}\d){11}/;

const IPV4 = String.raw`(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}(?::\d{1,5}|\/\d{1,3})?`;
/** One IPv4 address, or a list of them joined by short separator runs (X-Forwarded-For). */
const IPV4_RUN = new RegExp(`^${IPV4}(?:[^A-Za-z0-9]{1,${MAX_SEPARATOR_RUN}}${IPV4})*$`);

/** The digits of text[start, end), separators skipped. */
function digitsOf(text: string, start: number, end: number): Uint8Array {
  const out = new Uint8Array(end - start);
  let count = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (isDigit(c)) out[count++] = c - 48;
  }
  return out.subarray(0, count);
}

/** [start, end) of every card-number-like run in `text`, in order. */
export function findCardNumberRuns(text: string): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  const length = text.length;
  // Cheap exit for nearly every string (ids, hosts, messages): no run of 12 digits at all.
  if (!MAY_HAVE_LONG_RUN.test(text)) return found;

  let i = 0;
  while (i < length) {
    if (!isDigit(text.charCodeAt(i))) {
      i++;
      continue;
    }
    // One run: count its digits first; only a long one is looked at closely (rare).
    const start = i;
    let count = 0;
    let end = i;
    while (i < length) {
      if (isDigit(text.charCodeAt(i))) {
        count++;
        end = ++i;
        continue;
      }
      const width = separatorRunWidth(text, i);
      if (width === 0) break;
      i += width;
    }
    if (count >= MIN_DIGITS) {
      const digits = digitsOf(text, start, end);
      if (hasLuhnWindow(digits, digits.length) && !IPV4_RUN.test(text.slice(start, end))) found.push([start, end]);
    }
    i = end;
  }
  return found;
}

/** Whether `text` holds anything card-number-like (see the rule above). */
export function mayHoldCardNumber(text: string): boolean {
  return findCardNumberRuns(text).length > 0;
}

/** `text` with every card-number-like run replaced by CARD_NUMBER_MASK; the same string when there is none. */
export function maskCardNumbers(text: string): string {
  const runs = findCardNumberRuns(text);
  if (runs.length === 0) return text;
  let out = '';
  let from = 0;
  for (const [start, end] of runs) {
    out += text.slice(from, start) + CARD_NUMBER_MASK;
    from = end;
  }
  return out + text.slice(from);
}

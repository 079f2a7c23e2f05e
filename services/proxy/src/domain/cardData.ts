import { findCardNumberRuns, TesseraError } from '@tessera/common';

/**
 * `text` with each %XX escape replaced by the character of that byte. Detection only: a run written
 * `4242%204242%20…` hides behind the escapes' own digits (`%20` adds a 2 and a 0), and one written
 * `%34%32…` has no digit at all until decoded. A multi-byte escape becomes several non-alphanumeric
 * characters, which the detector reads as separators, as the decoded character would be.
 */
function percentDecoded(text: string): string {
  return text.replace(/%([0-9A-Fa-f]{2})/g, (_escape, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** An alias the check may pass over: one card-number-like run and nothing else, so that listing it hides no other text. */
function isCardLikeAlias(alias: string): boolean {
  const runs = findCardNumberRuns(alias);
  return runs.length === 1 && runs[0]?.[0] === 0 && runs[0][1] === alias.length;
}

/** Each alias replaced by letters, which end a run: the digits around it are judged on their own. */
function withoutAliases(text: string, aliases: readonly string[]): string {
  let out = text;
  for (const alias of aliases) out = out.split(alias).join('x'.repeat(alias.length));
  return out;
}

function holdsCardNumber(text: string, aliases: readonly string[]): boolean {
  if (findCardNumberRuns(withoutAliases(text, aliases)).length > 0) return true;
  const decoded = percentDecoded(text);
  return decoded !== text && findCardNumberRuns(withoutAliases(decoded, aliases)).length > 0;
}

/**
 * Defense in depth for inbound routes (ADR 0013): the inbound service forwards only what its
 * route's filters left without card data, and the proxy, which owns egress, checks again with the
 * one detector (findCardNumberRuns) before anything leaves. The body is read as UTF-8 text, as it
 * is and percent-decoded (form bodies, queries); the URL's query likewise. The Luhn-valid aliases
 * the inbound service wrote (`cardAliases`) look like cards by design and are passed over, those
 * exact values only. A hit refuses the request (card_data_unmatched) without saying where, so no
 * part of it is echoed.
 */
export function refuseCardNumbers(url: URL, body: Buffer, cardAliases: readonly string[] = []): void {
  const aliases = cardAliases.filter(isCardLikeAlias);
  if (holdsCardNumber(url.search, aliases) || (body.length > 0 && holdsCardNumber(body.toString('utf8'), aliases))) {
    throw new TesseraError('card_data_unmatched');
  }
}

import { CallerNotAllowedError } from '@tessera/protos';
import type { CardToTokenize, TokenRecordView } from '../domain/card';
import type { Vault } from './vault';

/**
 * Who is calling, by the identity its mTLS client certificate proved (the transport reads it):
 * - `service`: the gateway or the proxy, trusted with whatever RPC the caller policy lets each make
 *   (and, in plaintext development on loopback, anyone: there is no identity to tell apart);
 * - `fields`: the fields service, which serves the shoppers' browsers and is the most exposed
 *   process. The caller policy lets it make two RPCs only, and within them it gets what a browser
 *   may get, no more (PCI DSS 7.2, least privilege): a compromised fields service can create
 *   provisional tokens and attach a CVC under a grant a merchant's server opened, nothing else;
 * - `inbound`: the inbound routes' service (ADR 0013), as exposed as the fields: Tokenize only, for
 *   the merchant whose route took the card, and the answer blanked as for the fields.
 */
export type VaultCaller = 'service' | 'fields' | 'inbound';

/**
 * Tokenize from the fields identity: provisional only (the merchant's server must retain the token
 * before it lives on), and never `dedupe`, which answers the merchant's existing token for the
 * card: to a browser that is an oracle for "has this merchant seen this card number".
 */
export function checkTokenizeBy(caller: VaultCaller, card: Pick<CardToTokenize, 'provisional' | 'dedupe'>): void {
  if (caller === 'inbound') {
    // The route is the merchant's server-side consent (ADR 0013): its tokens are durable, as a retained one.
    if (card.provisional === true) throw new CallerNotAllowedError('the inbound identity makes durable tokens only');
    if (card.dedupe === true)
      throw new CallerNotAllowedError("the inbound identity may not ask for the merchant's existing token (dedupe)");
    return;
  }
  if (caller !== 'fields') return;
  if (card.provisional !== true) throw new CallerNotAllowedError('the fields identity may create provisional tokens only');
  if (card.dedupe === true) throw new CallerNotAllowedError("the fields identity may not ask for the merchant's existing token (dedupe)");
}

/**
 * The token record as the caller may see it. A browser (and an inbound route's sender) gets nothing derived from the card number
 * beyond brand and last four: no fingerprint (equal for equal cards, so it links a shopper's
 * purchases and confirms guesses of a number) and no BIN.
 */
export function tokenRecordFor(caller: VaultCaller, record: TokenRecordView): TokenRecordView {
  if (caller === 'service') return record;
  return { ...record, bin: '', fingerprint: '', deduplicated: false };
}

/** Tokenize as `caller` may: checked before anything is written, answered with what it may see. */
export async function tokenizeAs(vault: Pick<Vault, 'tokenize'>, caller: VaultCaller, card: CardToTokenize): Promise<TokenRecordView> {
  checkTokenizeBy(caller, card);
  return tokenRecordFor(caller, await vault.tokenize(card));
}

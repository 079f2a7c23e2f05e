import type { KeyMode, ValidCard } from '@tessera/common';
import type { TokenizeRequest } from '@tessera/protos';

/**
 * The vault's Tokenize request for a card the API's rules accepted, on behalf of the key's
 * merchant and mode. Every way a card arrives (POST /v1/token, the card fields, the hosted page)
 * sends it this way; a missing holder name or CVV is '' here (left out on the wire, see @tessera/protos contract.ts).
 */
export function tokenizeRequestFor(
  card: ValidCard,
  owner: { merchantId: string; mode: KeyMode },
  provisional: boolean,
  /** A provisional token's shorter life (made while its key is under attack); absent: the vault's own. */
  provisionalTtlSeconds?: number,
): TokenizeRequest {
  return {
    ...(provisional && provisionalTtlSeconds !== undefined ? { provisionalTtlSeconds } : {}),
    merchantId: owner.merchantId,
    number: card.number,
    holderName: card.holderName ?? '',
    expiryMonth: card.expiryMonth,
    expiryYear: card.expiryYear,
    cvv: card.cvv ?? '',
    mode: owner.mode,
    provisional,
  };
}

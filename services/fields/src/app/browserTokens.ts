import { validateCard, type ValidCard } from '@tessera/common';
import type { TokenRecord__Output } from '@tessera/protos';
import type { ApiKeyRecord } from '@tessera/merchant-data';
import { parseCardInput, tokenizeRequestFor } from '@tessera/edge';
import type { CallContext, FieldsVault } from './ports';

/** Whose token: the publishable key's (card fields) or the form session's (hosted page) merchant and mode. */
export type TokenOwner = Pick<ApiKeyRecord, 'merchantId' | 'mode'>;

/**
 * The card-testing check of a card that reaches a browser entry point (the distinct-cards limit
 * per shopper, docs/browser.md): called with a card the rules accepted, before it is tokenized;
 * throws the refusal. A card the rules refused never gets here, as it is not tokenized.
 */
export type AdmitCard = (number: string) => Promise<void>;

/** How a browser-made card is tokenized: its card-testing check, and a shorter life while its key is under attack. */
export interface BrowserCardChecks {
  admitCard?: AdmitCard;
  provisionalTtlSeconds?: number;
}

/**
 * A card from a shopper's browser, made a provisional token (it expires unless the merchant's
 * server retains it), after the card-testing check. The card fields' route and the hosted page
 * both tokenize here.
 */
export async function tokenizeBrowserCard(
  vault: Pick<FieldsVault, 'tokenize'>,
  owner: TokenOwner,
  card: ValidCard,
  checks: BrowserCardChecks,
  ctx: CallContext,
): Promise<TokenRecord__Output> {
  await checks.admitCard?.(card.number);
  return vault.tokenize(tokenizeRequestFor(card, owner, true, checks.provisionalTtlSeconds), ctx);
}

/**
 * POST /v1/browser/tokens: the card fields with a publishable key. Same card rules as
 * POST /v1/token on the gateway; `dedupe` is a merchant server's choice, which the browser's schema does not know.
 */
export async function createBrowserToken(
  vault: Pick<FieldsVault, 'tokenize'>,
  owner: TokenOwner,
  body: Record<string, unknown>,
  checks: BrowserCardChecks,
  ctx: CallContext,
): Promise<TokenRecord__Output> {
  const card = validateCard(parseCardInput(body), owner.mode);
  return tokenizeBrowserCard(vault, owner, card, checks, ctx);
}

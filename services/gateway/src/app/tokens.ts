import { TesseraError, validateCard, validateExpiry, type ValidCard } from '@tessera/common';
import type { TokenRef } from '@tessera/protos';
import type { TokenRecord__Output } from '@tessera/protos';
import type { ApiKeyRecord } from '@tessera/merchant-data';
import { parseCardInput, parseCvcInput, parseRetainRequest, parseTokenCreate, parseTokenUpdate } from '../domain/requestSchemas';
import { tokenizeRequestFor } from '../domain/tokenizeRequest';
import type { CallContext, VaultApi } from './ports';

/**
 * What a merchant can do with a token (POST/GET/PATCH/DELETE /v1/token…, retain, a re-collected
 * CVC) and the one way a card becomes a token, whichever entry point it came through: a merchant's
 * server, the card fields, the hosted payment page. Transport parses the request, calls one of
 * these and answers with what its caller may see.
 */
export type TokenVault = Pick<VaultApi, 'tokenize' | 'getToken' | 'updateToken' | 'attachCvv' | 'retainToken' | 'deleteToken'>;

/** Whose token: a token answers only to keys of the merchant and mode that created it (test and live never meet). */
export type TokenOwner = Pick<ApiKeyRecord, 'merchantId' | 'mode'>;

/**
 * The path's token as the owner asks for it. One longer than any token we issue is answered like
 * any unknown token without asking the vault. Checked after the body, as the routes always have.
 */
export function ownedToken(owner: TokenOwner, token: unknown): TokenRef {
  return { merchantId: owner.merchantId, mode: owner.mode, token: checkedTokenParam(token) };
}

export function checkedTokenParam(token: unknown): string {
  if (typeof token !== 'string' || token.length === 0 || token.length > 256) throw new TesseraError('token_not_found');
  return token;
}

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
  vault: Pick<VaultApi, 'tokenize'>,
  owner: TokenOwner,
  card: ValidCard,
  checks: BrowserCardChecks,
  ctx: CallContext,
): Promise<TokenRecord__Output> {
  await checks.admitCard?.(card.number);
  return vault.tokenize(tokenizeRequestFor(card, owner, true, checks.provisionalTtlSeconds), ctx);
}

/** POST /v1/token: a merchant's server with a secret key; the token is ordinary at once, or the existing one (dedupe). */
export async function createToken(
  vault: Pick<VaultApi, 'tokenize'>,
  owner: TokenOwner,
  body: Record<string, unknown>,
  ctx: CallContext,
): Promise<TokenRecord__Output> {
  const { dedupe, ...input } = parseTokenCreate(body);
  const card = validateCard(input, owner.mode);
  return vault.tokenize({ ...tokenizeRequestFor(card, owner, false), ...(dedupe === true ? { dedupe } : {}) }, ctx);
}

/**
 * POST /v1/browser/tokens: the card fields with a publishable key. Same card rules as
 * POST /v1/token; `dedupe` is a merchant server's choice, which the browser's schema does not know.
 */
export async function createBrowserToken(
  vault: Pick<VaultApi, 'tokenize'>,
  owner: TokenOwner,
  body: Record<string, unknown>,
  checks: BrowserCardChecks,
  ctx: CallContext,
): Promise<TokenRecord__Output> {
  const card = validateCard(parseCardInput(body), owner.mode);
  return tokenizeBrowserCard(vault, owner, card, checks, ctx);
}

export async function readToken(
  vault: Pick<VaultApi, 'getToken'>,
  owner: TokenOwner,
  token: unknown,
  ctx: CallContext,
): Promise<TokenRecord__Output> {
  return vault.getToken(ownedToken(owner, token), ctx);
}

/**
 * PATCH /v1/token/{token}: a re-issued card (same number) gets its new expiry and/or holder name,
 * under the rules of a new card. Idempotent by nature (the same body gives the same record).
 */
export async function updateToken(
  vault: Pick<VaultApi, 'updateToken'>,
  owner: TokenOwner,
  token: unknown,
  body: Record<string, unknown>,
  ctx: CallContext,
): Promise<TokenRecord__Output> {
  const input = parseTokenUpdate(body);
  if (input.expiryMonth !== undefined && input.expiryYear !== undefined) validateExpiry(input.expiryMonth, input.expiryYear);
  return vault.updateToken(
    {
      ...ownedToken(owner, token),
      expiryMonth: input.expiryMonth ?? 0,
      expiryYear: input.expiryYear ?? 0,
      holderName: input.holderName ?? '',
    },
    ctx,
  );
}

/**
 * Makes a provisional (browser-made) token an ordinary one; retaining an ordinary or already
 * retained token answers the same record. Only a secret key gets here.
 */
export async function retainToken(
  vault: Pick<VaultApi, 'retainToken'>,
  owner: TokenOwner,
  token: unknown,
  body: Record<string, unknown>,
  ctx: CallContext,
): Promise<TokenRecord__Output> {
  parseRetainRequest(body);
  return vault.retainToken(ownedToken(owner, token), ctx);
}

export async function deleteToken(
  vault: Pick<VaultApi, 'deleteToken'>,
  owner: TokenOwner,
  token: unknown,
  ctx: CallContext,
): Promise<void> {
  return vault.deleteToken(ownedToken(owner, token), ctx);
}

/**
 * POST /v1/token/{token}/cvc: a merchant's server (secret key) re-collected the CVV. The
 * browser's way is the CVC-only field under a CVC session (app/cvcSessions.ts).
 */
export async function attachCvc(
  vault: Pick<VaultApi, 'attachCvv'>,
  owner: TokenOwner,
  token: unknown,
  body: Record<string, unknown>,
  ctx: CallContext,
): Promise<TokenRecord__Output> {
  const { cvv } = parseCvcInput(body);
  return vault.attachCvv({ ...ownedToken(owner, token), cvv: String(cvv), cvvIsInteger: typeof cvv === 'number' }, ctx);
}

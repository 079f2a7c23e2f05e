import { TesseraError, validateCard, validateExpiry } from '@tessera/common';
import type { TokenRef } from '@tessera/protos';
import type { TokenRecord__Output } from '@tessera/protos';
import type { ApiKeyRecord } from '@tessera/merchant-data';
import { tokenizeRequestFor } from '@tessera/edge';
import { parseCvcInput, parseRetainRequest, parseTokenCreate, parseTokenUpdate } from '../domain/requestSchemas';
import type { CallContext, VaultApi } from './ports';
import { recordNoEvent, type RecordEvent } from './events';

/**
 * What a merchant can do with a token (POST/GET/PATCH/DELETE /v1/token…, retain, a re-collected
 * CVC). A shopper's browser makes its (provisional) tokens on the fields service instead. Transport
 * parses the request, calls one of these and answers with what its caller may see.
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

/** A token event's object: what the answer shows of the card anyway, never more (no bin, no fingerprint). */
export function tokenEventObject(record: TokenRecord__Output): Record<string, unknown> {
  return { id: record.token, brand: record.brand, last4: record.last4, expiryMonth: record.expiryMonth, expiryYear: record.expiryYear };
}

export function checkedTokenParam(token: unknown): string {
  if (typeof token !== 'string' || token.length === 0 || token.length > 256) throw new TesseraError('token_not_found');
  return token;
}

/** POST /v1/token: a merchant's server with a secret key; the token is ordinary at once, or the existing one (dedupe). */
export async function createToken(
  vault: Pick<VaultApi, 'tokenize'>,
  owner: TokenOwner,
  body: Record<string, unknown>,
  ctx: CallContext,
  recordEvent: RecordEvent = recordNoEvent,
): Promise<TokenRecord__Output> {
  const { dedupe, aliasFormats, ...input } = parseTokenCreate(body);
  const card = cardToTokenize(input, owner);
  const record = await vault.tokenize(
    {
      ...tokenizeRequestFor(card, owner, false),
      ...(dedupe === true ? { dedupe } : {}),
      ...(aliasFormats !== undefined && aliasFormats.length > 0 ? { aliasFormats } : {}),
    },
    ctx,
  );
  // An existing token answered by dedupe was not created.
  if (!record.deduplicated) await recordEvent('token.created', owner, tokenEventObject(record), ctx);
  return record;
}

/**
 * The card under the rules of the key's mode, with one exception: a test key's number that fails
 * only for not being a test card goes on to the vault, which answers number_is_alias when it is one
 * of the merchant's aliases (an alias is never a test card) and live_card_in_test_mode otherwise,
 * so a merchant learns what it sent whichever key it used. Nothing is stored for it either way.
 */
function cardToTokenize(input: Parameters<typeof validateCard>[0], owner: TokenOwner): ReturnType<typeof validateCard> {
  try {
    return validateCard(input, owner.mode);
  } catch (err) {
    if (owner.mode === 'test' && err instanceof TesseraError && err.code === 'live_card_in_test_mode') return validateCard(input, 'live');
    throw err;
  }
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
  recordEvent: RecordEvent = recordNoEvent,
): Promise<TokenRecord__Output> {
  const input = parseTokenUpdate(body);
  if (input.expiryMonth !== undefined && input.expiryYear !== undefined) validateExpiry(input.expiryMonth, input.expiryYear);
  const record = await vault.updateToken(
    {
      ...ownedToken(owner, token),
      expiryMonth: input.expiryMonth ?? 0,
      expiryYear: input.expiryYear ?? 0,
      holderName: input.holderName ?? '',
    },
    ctx,
  );
  await recordEvent('token.updated', owner, tokenEventObject(record), ctx);
  return record;
}

/**
 * Makes a provisional (browser-made) token an ordinary one; retaining an ordinary or already
 * retained token answers the same record. Only a secret key gets here. A browser-made token is
 * the merchant's from this moment, so this, not its making, is its event (token.retained); the
 * vault's answer does not say whether it was provisional, so the token is read first. Two retains
 * of one token at once may both record the event.
 */
export async function retainToken(
  vault: Pick<VaultApi, 'retainToken' | 'getToken'>,
  owner: TokenOwner,
  token: unknown,
  body: Record<string, unknown>,
  ctx: CallContext,
  recordEvent: RecordEvent = recordNoEvent,
): Promise<TokenRecord__Output> {
  parseRetainRequest(body);
  const ref = ownedToken(owner, token);
  const before = await vault.getToken(ref, ctx);
  const record = await vault.retainToken(ref, ctx);
  if (before.provisional) await recordEvent('token.retained', owner, tokenEventObject(record), ctx);
  return record;
}

export async function deleteToken(
  vault: Pick<VaultApi, 'deleteToken'>,
  owner: TokenOwner,
  token: unknown,
  ctx: CallContext,
  recordEvent: RecordEvent = recordNoEvent,
): Promise<void> {
  const ref = ownedToken(owner, token);
  await vault.deleteToken(ref, ctx);
  // The answer (204) shows nothing of the card, so neither does the event.
  await recordEvent('token.deleted', owner, { id: ref.token }, ctx);
}

/**
 * POST /v1/token/{token}/cvc: a merchant's server (secret key) re-collected the CVV. The
 * browser's way is the CVC-only field under a CVC session (the fields service).
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

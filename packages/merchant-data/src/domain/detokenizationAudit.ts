import { mayHoldCardNumber } from '@tessera/common';
import { randomId } from './randomIds';

/**
 * One line of the detokenization audit log (PCI DSS 10.2.1.1: every access to cardholder data).
 * Every POST /v1/proxy with a body asks the vault to Render card data into it, and the vault lets
 * only the proxy render, which serves only the gateway (mTLS); so the gateway, the one process
 * that knows all of merchant, API key, token, PSP host and outcome, writes this entry. Only
 * identifiers: never card data, the PSP path or query, headers or bodies. The token and host are
 * the caller's text (a PAN sent as `token` reaches here before any vault lookup): one that is
 * card-number-like is stored as CARD_NUMBER_LIKE, not masked in place, so no part of it is kept.
 */
export interface DetokenizationRecord {
  id: string;
  at: string;
  requestId: string;
  merchantId: string;
  keyId: string;
  token: string;
  /** host[:port] of pspUrl; the path and query are left out (they may carry anything). */
  pspHost: string;
  method: string;
  /** The status Tessera answered: the PSP's, or its own error's. */
  status: number;
  /** Tessera's error code when the call failed (the PSP may not have been reached), else null. */
  code: string | null;
}

/** What an audit entry holds instead of a caller's token or host that could be a card number. */
export const CARD_NUMBER_LIKE = '[card number]';

function storable(text: string): string {
  return mayHoldCardNumber(text) ? CARD_NUMBER_LIKE : text;
}

export function pspHostOf(url: string): string {
  try {
    return storable(new URL(url).host);
  } catch {
    return 'invalid';
  }
}

export function buildDetokenizationRecord(
  input: Omit<DetokenizationRecord, 'id' | 'at' | 'pspHost'> & { pspUrl: string; now: Date },
): DetokenizationRecord {
  return {
    id: randomId('dtk_'),
    at: input.now.toISOString(),
    requestId: input.requestId,
    merchantId: input.merchantId,
    keyId: input.keyId,
    token: storable(input.token),
    pspHost: pspHostOf(input.pspUrl),
    method: input.method,
    status: input.status,
    code: input.code,
  };
}

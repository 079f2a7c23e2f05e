import { maskCardNumbers, TesseraError } from '@tessera/common';
import { isValidMerchantId } from '../../domain/apiKeys';
import { canonicalList, quoteInput } from '../../app/inputLists';
import { canonicalPspHostEntry, MAX_PSP_HOSTS } from '../../domain/pspHosts';

type Body = Record<string, unknown>;

/**
 * Unknown fields are refused, as on /v1, so a typo (`allowedIps`) cannot silently do nothing. The
 * name is the caller's text: echoed masked and bounded.
 */
export function refuseUnknown(body: Body, allowed: readonly string[]): void {
  for (const name of Object.keys(body)) {
    if (allowed.includes(name)) continue;
    const shown = maskCardNumbers(name).slice(0, 128);
    throw new TesseraError('parameter_unknown', { param: shown, message: `Unknown parameter ${quoteInput(shown)}.` });
  }
}

export function requiredString(body: Body, name: string, maxLength: number): string {
  const value = body[name];
  if (value === undefined || value === null || value === '') {
    throw new TesseraError('parameter_missing', { param: name, message: `"${name}" is required.` });
  }
  if (typeof value !== 'string') throw new TesseraError('parameter_invalid', { param: name, message: `"${name}" must be a string.` });
  if (value.length > maxLength) {
    throw new TesseraError('parameter_invalid', { param: name, message: `"${name}" must be at most ${maxLength} characters.` });
  }
  return value;
}

export function optionalString(body: Body, name: string, maxLength: number): string | undefined {
  if (body[name] === undefined || body[name] === null || body[name] === '') return undefined;
  return requiredString(body, name, maxLength);
}

export function merchantIdParam(value: string, param: string): string {
  if (!isValidMerchantId(value)) {
    throw new TesseraError('parameter_invalid', { param, message: 'A merchant id is 1-64 letters, digits, "_", "." or "-".' });
  }
  return value;
}

export function pspHostsParam(body: Body): string[] | undefined {
  return canonicalList(body.pspHosts, 'pspHosts', MAX_PSP_HOSTS, canonicalPspHostEntry, 'PSP host');
}

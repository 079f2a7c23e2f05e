import { TesseraError, type KeyMode } from '@tessera/common';
import { isValidMerchantId } from '../../domain/apiKeys';
import {
  canonicalCidrEntry,
  canonicalDomainPattern,
  MAX_ALLOWED_CIDRS,
  MAX_ALLOWED_DOMAINS,
  type PatternResult,
} from '../../domain/keyRestrictions';
import { canonicalPspHostEntry, MAX_PSP_HOSTS } from '../../domain/pspHosts';

type Body = Record<string, unknown>;

/** Unknown fields are refused, as on /v1, so a typo (`allowedIps`) cannot silently do nothing. */
export function refuseUnknown(body: Body, allowed: readonly string[]): void {
  for (const name of Object.keys(body)) {
    if (!allowed.includes(name)) throw new TesseraError('parameter_unknown', { param: name, message: `Unknown parameter "${name}".` });
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

export function keyModeParam(body: Body): KeyMode {
  const mode = requiredString(body, 'mode', 10);
  if (mode !== 'test' && mode !== 'live')
    throw new TesseraError('parameter_invalid', { param: 'mode', message: '"mode" must be "test" or "live".' });
  return mode;
}

/** Shown back in a message: short, printable, so an error can never carry a blob of anything. */
function quote(value: string): string {
  const printable = value.replace(/[^\x20-\x7e]/g, '?');
  return `"${printable.length > 60 ? `${printable.slice(0, 60)}…` : printable}"`;
}

function list(body: Body, name: string, max: number, canonical: (raw: string) => PatternResult, what: string): string[] | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (!Array.isArray(value))
    throw new TesseraError('parameter_invalid', { param: name, message: `"${name}" must be an array of strings.` });
  if (value.length > max) throw new TesseraError('parameter_invalid', { param: name, message: `At most ${max} entries in "${name}".` });
  const out: string[] = [];
  value.forEach((entry: unknown, i) => {
    const param = `${name}[${i}]`;
    if (typeof entry !== 'string' || entry.length > 300) {
      throw new TesseraError('parameter_invalid', { param, message: `Each entry of "${name}" must be a string.` });
    }
    const result = canonical(entry);
    if (!result.ok) throw new TesseraError('parameter_invalid', { param, message: `${what} ${quote(entry.trim())} ${result.message}.` });
    if (!out.includes(result.value)) out.push(result.value);
  });
  return out;
}

export function allowedCidrsParam(body: Body): string[] | undefined {
  return list(body, 'allowedCidrs', MAX_ALLOWED_CIDRS, canonicalCidrEntry, 'IP range');
}

export function allowedDomainsParam(body: Body): string[] | undefined {
  return list(body, 'allowedDomains', MAX_ALLOWED_DOMAINS, canonicalDomainPattern, 'Domain');
}

export function pspHostsParam(body: Body): string[] | undefined {
  return list(body, 'pspHosts', MAX_PSP_HOSTS, canonicalPspHostEntry, 'PSP host');
}

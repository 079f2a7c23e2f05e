import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { keyedEntries, type KeyMode } from '@tessera/common';

export type { KeyMode };

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const API_KEY_RANDOM_LENGTH = 32;
/** CRC32 < 62^6, so six base62 characters always hold it. */
export const API_KEY_CHECKSUM_LENGTH = 6;
/**
 * A key's kind. `secret` keys (`tsk_…`) belong on merchant servers and work on every /v1 route.
 * `publishable` keys (`tpk_…`) are meant to be seen: a browser gets one at initialization of
 * Tessera's card fields, so it can only create tokens through Tessera's own pages, and only
 * from the origins set on it.
 */
export type ApiKeyKind = 'secret' | 'publishable';
export const API_KEY_KINDS = ['secret', 'publishable'] as const satisfies readonly ApiKeyKind[];
const KIND_PREFIX: Record<ApiKeyKind, string> = { secret: 'tsk', publishable: 'tpk' };

/**
 * `<tsk|tpk>_<mode>_` + 32 random base62 + 6 base62 of CRC32 over everything before it. The
 * checksum lets the gateway reject a mistyped or truncated key without a store lookup, and lets
 * secret scanners recognise a real key. Secret keys issued before the checksum existed (32
 * characters, no suffix) are still accepted; they simply skip that early check. Publishable keys
 * came later and always carry it.
 */
const API_KEY_PATTERN = /^(tsk|tpk)_(test|live)_([0-9A-Za-z]{32})([0-9A-Za-z]{6})?$/;

export interface ApiKeyRecord {
  id: string;
  merchantId: string;
  mode: KeyMode;
  /** Absent in records written before publishable keys existed: those are all secret keys (see keyKindOf). */
  kind?: ApiKeyKind;
  /** HMAC-SHA256(pepper, key) in hex: the key itself is never stored. */
  digest: string;
  /**
   * Which pepper `digest` was made with (pepperIdOf), so an operator can see how many keys are
   * still on an old one. Absent in records written before API_KEY_PEPPERS existed.
   */
  pepperId?: string;
  /** Enough to recognise a key in a list (`tsk_test_AbCd`, `tpk_live_AbCd`) without making it guessable. */
  prefix: string;
  last4: string;
  allowedCidrs: string[];
  /** Host names / `*.example.com` wildcards the key may be used from in a browser (Origin). Absent in records written before it existed. */
  allowedDomains: string[];
  /**
   * Publishable keys only: the exact origins (`https://shop.example`, `https://*.shop.example:8443`)
   * whose pages may use the key. Absent on secret keys and on records written before it existed.
   */
  allowedOrigins?: string[];
  createdAt: string;
  /** Last change of the restrictions. */
  updatedAt?: string;
  revokedAt?: string;
  /**
   * A scheduled revocation: the key is refused from this instant on. Set on the old key of an
   * overlapping rotation (`keys revoke <id> --after 24h`) so both keys work while clients move
   * over. Absent in records written before it existed, and on keys without an expiry.
   */
  expiresAt?: string;
  lastUsedAt?: string;
  lastUsedIp?: string;
}

/** Uniform base62 from a CSPRNG: bytes >= 248 are rejected so `% 62` has no bias. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of crypto.randomBytes(length * 2)) {
      if (byte >= 248) continue;
      out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** Base62 of the CRC32 of `body`, left-padded to API_KEY_CHECKSUM_LENGTH. */
export function apiKeyChecksum(body: string): string {
  let n = zlib.crc32(body);
  let out = '';
  for (let i = 0; i < API_KEY_CHECKSUM_LENGTH; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

export function generateApiKey(mode: KeyMode, kind: ApiKeyKind = 'secret'): string {
  const body = `${KIND_PREFIX[kind]}_${mode}_${randomBase62(API_KEY_RANDOM_LENGTH)}`;
  return body + apiKeyChecksum(body);
}

interface ApiKeyParts {
  kind: ApiKeyKind;
  mode: KeyMode;
  random: string;
  checksum: string | undefined;
}

/** Shape and, for checksummed keys, the checksum; a legacy 32-character secret key passes on shape alone. */
function matchApiKey(value: string): ApiKeyParts | undefined {
  const match = API_KEY_PATTERN.exec(value);
  if (!match) return undefined;
  const kind: ApiKeyKind = match[1] === 'tpk' ? 'publishable' : 'secret';
  const checksum = match[4];
  if (checksum === undefined && kind === 'publishable') return undefined;
  if (checksum !== undefined && apiKeyChecksum(value.slice(0, -API_KEY_CHECKSUM_LENGTH)) !== checksum) return undefined;
  return { kind, mode: match[2] as KeyMode, random: match[3] ?? '', checksum };
}

export function isApiKeyFormat(value: string): boolean {
  return matchApiKey(value) !== undefined;
}

/** True for keys issued before the checksum suffix existed (still accepted). */
export function isLegacyApiKey(value: string): boolean {
  const parts = matchApiKey(value);
  return parts !== undefined && parts.checksum === undefined;
}

/** The mode a well-formed key declares in its prefix, or undefined for anything malformed (bad checksum included). */
export function modeOfApiKey(value: string): KeyMode | undefined {
  return matchApiKey(value)?.mode;
}

/** Kind and mode a well-formed key declares in its prefix, or undefined for anything malformed (bad checksum included). */
export function kindAndModeOfApiKey(value: string): { kind: ApiKeyKind; mode: KeyMode } | undefined {
  const parts = matchApiKey(value);
  return parts ? { kind: parts.kind, mode: parts.mode } : undefined;
}

/** A record's kind; records written before publishable keys existed are secret keys. */
export function keyKindOf(record: Pick<ApiKeyRecord, 'kind'>): ApiKeyKind {
  return record.kind ?? 'secret';
}

/** A keyed hash, so a leaked key store cannot be brute-forced without the pepper as well. */
export function hashApiKey(pepper: string, apiKey: string): string {
  return crypto.createHmac('sha256', pepper).update(apiKey, 'utf8').digest('hex');
}

/**
 * A short fingerprint of a pepper, stored with each digest instead of the pepper's version name,
 * so every code path that hashes a key records it without knowing the configured names. Says
 * nothing useful about a pepper of 32+ random characters.
 */
export function pepperIdOf(pepper: string): string {
  return crypto.createHmac('sha256', pepper).update('tessera.api-key-pepper-id', 'utf8').digest('hex').slice(0, 12);
}

/** One pepper of API_KEY_PEPPERS: a version name operators use, and its value. */
export interface Pepper {
  version: string;
  pepper: string;
}

export const MIN_PEPPER_LENGTH = 32;
const PEPPER_VERSION_PATTERN = /^[A-Za-z0-9_-]{1,16}$/;

export type PeppersParseResult = { ok: true; peppers: Pepper[] } | { ok: false; problems: string[] };

/**
 * Parses `v1:pepper,v2:pepper`, newest last (the newest hashes new keys; the others still find
 * keys hashed under them). Problems name entries by position and version, never a pepper.
 */
export function parseApiKeyPeppers(text: string): PeppersParseResult {
  const problems: string[] = [];
  const peppers: Pepper[] = [];
  const entries = keyedEntries(text);
  if (entries.length === 0) return { ok: false, problems: ['must list at least one pepper as version:pepper'] };
  entries.forEach(({ where, id, value: pepper }) => {
    const version = id ?? '';
    if (!PEPPER_VERSION_PATTERN.test(version)) {
      problems.push(`${where} must be version:pepper, the version 1-16 characters of A-Z a-z 0-9 _ -`);
      return;
    }
    if (pepper.length < MIN_PEPPER_LENGTH) {
      problems.push(`${where} (version "${version}"): the pepper must be at least ${MIN_PEPPER_LENGTH} characters`);
      return;
    }
    if (peppers.some((p) => p.version === version)) {
      problems.push(`${where}: version "${version}" is listed more than once`);
      return;
    }
    if (peppers.some((p) => p.pepper === pepper)) {
      problems.push(`${where} (version "${version}"): the same pepper is listed twice`);
      return;
    }
    peppers.push({ version, pepper });
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, peppers };
}

/** Constant-time comparison of two hex digests, so response timing reveals nothing about a key. */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  if (left.length !== right.length || left.length === 0) return false;
  return crypto.timingSafeEqual(left, right);
}

/** True once a key's scheduled expiry has passed (a key without one never expires). */
export function isApiKeyExpired(record: Pick<ApiKeyRecord, 'expiresAt'>, now: Date): boolean {
  if (record.expiresAt === undefined) return false;
  const at = Date.parse(record.expiresAt);
  // An unreadable expiry refuses the key: failing closed is the safe side of a revocation.
  return Number.isNaN(at) || at <= now.getTime();
}

/** `active`, `revoked`, or `expired` (its scheduled expiry has passed; a revocation wins). */
export function apiKeyStatus(record: Pick<ApiKeyRecord, 'revokedAt' | 'expiresAt'>, now: Date): 'active' | 'revoked' | 'expired' {
  if (record.revokedAt !== undefined) return 'revoked';
  return isApiKeyExpired(record, now) ? 'expired' : 'active';
}

export function generateKeyId(): string {
  return `key_${randomBase62(20)}`;
}

export interface NewKeyParams {
  merchantId: string;
  mode: KeyMode;
  /** Default `secret`. */
  kind?: ApiKeyKind;
  allowedCidrs: string[];
  allowedDomains?: string[];
  /** Publishable keys only (see keyRestrictions.ts for the rules per kind). */
  allowedOrigins?: string[];
  pepper: string;
  now: Date;
}

/** Builds the stored record for a key; `apiKey` must already be well-formed. */
export function buildApiKeyRecord(apiKey: string, params: NewKeyParams): ApiKeyRecord {
  const kind = params.kind ?? 'secret';
  const parts = matchApiKey(apiKey);
  if (!parts || parts.mode !== params.mode) throw new Error('API key does not match the requested mode');
  if (parts.kind !== kind) throw new Error('API key does not match the requested kind');
  const random = parts.random + (parts.checksum ?? '');
  return {
    id: generateKeyId(),
    merchantId: params.merchantId,
    mode: params.mode,
    // Secret records keep the shape they always had, so an older gateway replica still reads them.
    ...(kind === 'publishable' ? { kind } : {}),
    digest: hashApiKey(params.pepper, apiKey),
    pepperId: pepperIdOf(params.pepper),
    prefix: `${KIND_PREFIX[kind]}_${params.mode}_${random.slice(0, 4)}`,
    last4: random.slice(-4),
    allowedCidrs: [...params.allowedCidrs],
    allowedDomains: [...(params.allowedDomains ?? [])],
    ...(kind === 'publishable' ? { allowedOrigins: [...(params.allowedOrigins ?? [])] } : {}),
    createdAt: params.now.toISOString(),
  };
}

/** A new random key and its record; the key is returned once and never stored. */
export function issueApiKey(params: NewKeyParams): { apiKey: string; record: ApiKeyRecord } {
  const apiKey = generateApiKey(params.mode, params.kind);
  return { apiKey, record: buildApiKeyRecord(apiKey, params) };
}

export const MERCHANT_ID_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

export function isValidMerchantId(value: string): boolean {
  return MERCHANT_ID_PATTERN.test(value);
}

import {
  API_KEY_KINDS,
  type ApiKeyAdmin,
  type ApiKeyCheck,
  type ApiKeyKind,
  type ApiKeyLookup,
  type ApiKeyRecord,
  type ApiKeyRefusal,
  type AuditLog,
  canonicalCidrEntry,
  canonicalDomainPattern,
  canonicalOriginPattern,
  decideApiKey,
  issueApiKey,
  keyKindOf,
  type KeyRestrictionLists,
  MAX_ALLOWED_CIDRS,
  MAX_ALLOWED_DOMAINS,
  MAX_ALLOWED_ORIGINS,
  refusedRestrictions,
} from '@tessera/merchant-data';
import { z } from 'zod';
import { TesseraError, type KeyMode } from '@tessera/common';
import { canManageMerchant } from '../domain/operators';
import { auditAs, type Caller } from './caller';
import { lookUpApiKey } from '@tessera/edge';
import { merchantIdSchema } from './merchants';
import { recordApiKeyEvent, type AdminEventDeps } from './apiKeyEvents';
import { canonicalListSchema, optionalText, parseInput, requiredText } from '@tessera/edge';

/**
 * What a user can do with API keys, for every entry point: the admin API (and so the dashboard)
 * and the keys CLI call these and only parse and present around them. Each function checks its
 * input, applies the rules of domain/, writes the audit entry, and returns plain records or
 * throws a TesseraError (400 bad input, 403/404 out of the caller's reach).
 */
export interface ApiKeyDeps {
  // Lookup too: "test this key" finds the key it is given.
  keyStore: ApiKeyAdmin & ApiKeyLookup;
  audit: Pick<AuditLog, 'append'>;
  pepper: string;
  /** Older API-key peppers, newest first: "test this key" finds keys still under them, as /v1 does. */
  previousPeppers?: readonly string[];
  now: () => Date;
  /** Where api_key.created and .revoked are recorded; absent: no events. */
  events?: AdminEventDeps;
}

/** Who acts (app/caller.ts); the name the key use cases have always used. */
export type KeyCaller = Caller;

function mayManage(caller: KeyCaller, merchantId: string): boolean {
  return canManageMerchant(caller, merchantId);
}

export type RestrictionField = keyof KeyRestrictionLists;

/** How each list's entries are named in an error: the API's words, or the CLI's flags. */
export type FieldLabels = Record<RestrictionField, string>;
export const API_FIELD_LABELS: FieldLabels = { allowedCidrs: 'IP range', allowedDomains: 'Domain', allowedOrigins: 'Origin' };

export interface RestrictionChanges {
  allowedCidrs?: string[];
  allowedDomains?: string[];
  allowedOrigins?: string[];
}

export interface CreateKeyInput extends KeyRestrictionLists {
  merchantId: string;
  mode: KeyMode;
  kind: ApiKeyKind;
  allowedCidrs: string[];
  allowedDomains: string[];
  allowedOrigins: string[];
}

function restrictionListSchemas(labels: FieldLabels) {
  return {
    allowedCidrs: canonicalListSchema('allowedCidrs', MAX_ALLOWED_CIDRS, canonicalCidrEntry, labels.allowedCidrs)
      .optional()
      .meta({ description: 'Secret keys only: IPv4/IPv6 addresses or CIDRs the key may be used from.' }),
    allowedDomains: canonicalListSchema('allowedDomains', MAX_ALLOWED_DOMAINS, canonicalDomainPattern, labels.allowedDomains)
      .optional()
      .meta({ description: 'Secret keys only: host names (`shop.example.com`, `*.example.com`) of browser pages (Origin), any port.' }),
    allowedOrigins: canonicalListSchema('allowedOrigins', MAX_ALLOWED_ORIGINS, canonicalOriginPattern, labels.allowedOrigins)
      .optional()
      .meta({
        description:
          'Publishable keys only, at least one: exact origins (`https://shop.example`, `https://*.shop.example:8443`); live keys https only.',
      }),
  };
}

/** A change of restrictions: each list given replaces the key's, canonical and de-duplicated. */
export function restrictionChangesSchema(labels: FieldLabels = API_FIELD_LABELS) {
  return z.strictObject(restrictionListSchemas(labels));
}

/** A create request, as the admin API takes it (`merchantId` defaults to a merchant operator's own). */
export function createKeyRequestSchema(labels: FieldLabels = API_FIELD_LABELS) {
  return z.strictObject({
    merchantId: merchantIdSchema()
      .optional()
      .meta({ description: 'Required for platform operators; a merchant operator’s own by default.' }),
    kind: z
      .enum(API_KEY_KINDS, { error: '"kind" must be "secret" or "publishable".' })
      .optional()
      .meta({ description: '`secret` (default): server routes. `publishable`: browser card collection only; needs allowedOrigins.' }),
    mode: z.enum(['test', 'live'], { error: '"mode" must be "test" or "live".' }),
    ...restrictionListSchemas(labels),
  });
}

/** POST /admin/v1/keys/test: a pasted key, judged as if sent from `clientIp` (and `origin`). */
export const keyTestRequestSchema = z.strictObject({
  apiKey: requiredText('apiKey', 100),
  clientIp: optionalText('clientIp', 64)
    .nullable()
    .meta({ description: 'Judge the key as if used from this address (default: the caller’s).' }),
  origin: optionalText('origin', 300).nullable(),
});

/** Each list given, canonical and de-duplicated; lists not given stay undefined ("unchanged"). */
export function parseRestrictionChanges(raw: Record<string, unknown>, labels: FieldLabels = API_FIELD_LABELS): RestrictionChanges {
  const parsed = parseInput(restrictionChangesSchema(labels), raw);
  return Object.fromEntries(Object.entries(parsed).filter(([, list]) => list !== undefined));
}

/** A whole create request checked, the rules of its kind included, before anything is written. */
export function parseCreateKeyInput(raw: Record<string, unknown>, labels: FieldLabels = API_FIELD_LABELS): CreateKeyInput {
  const parsed = parseInput(createKeyRequestSchema(labels), raw);
  if (parsed.merchantId === undefined) {
    throw new TesseraError('parameter_missing', { param: 'merchantId', message: '"merchantId" is required.' });
  }
  const input: CreateKeyInput = {
    merchantId: parsed.merchantId,
    mode: parsed.mode,
    kind: parsed.kind ?? 'secret',
    allowedCidrs: parsed.allowedCidrs ?? [],
    allowedDomains: parsed.allowedDomains ?? [],
    allowedOrigins: parsed.allowedOrigins ?? [],
  };
  refuseForKind(input.kind, input.mode, input);
  return input;
}

function refuseForKind(kind: ApiKeyKind, mode: KeyMode, lists: KeyRestrictionLists): void {
  const refusal = refusedRestrictions(kind, mode, lists);
  if (refusal) throw new TesseraError(refusal.code, { param: refusal.field, message: refusal.message });
}

/** The restriction lists of a record as the audit log shows them (origins only for publishable keys). */
function listsOf(record: ApiKeyRecord): Record<string, string[]> {
  return {
    allowedCidrs: record.allowedCidrs,
    allowedDomains: record.allowedDomains ?? [],
    ...(keyKindOf(record) === 'publishable' ? { allowedOrigins: record.allowedOrigins ?? [] } : {}),
  };
}

/** Creates a key; the key itself is in the result once and is never stored or logged. */
export async function createApiKey(
  deps: ApiKeyDeps,
  caller: KeyCaller,
  input: CreateKeyInput,
): Promise<{ apiKey: string; record: ApiKeyRecord }> {
  const checked = parseCreateKeyInput({ ...input });
  const { merchantId, mode, kind } = checked;
  if (!mayManage(caller, merchantId)) throw new TesseraError('merchant_forbidden', { param: 'merchantId' });
  const { apiKey, record } = issueApiKey({ ...checked, pepper: deps.pepper, now: deps.now() });
  if (!(await deps.keyStore.create(record))) {
    throw new TesseraError('internal_error', { cause: new Error('API key digest collision') });
  }
  await auditAs(deps, caller, {
    action: 'key.created',
    merchantId,
    keyId: record.id,
    details: { mode, ...(kind === 'publishable' ? { kind } : {}), ...listsOf(record) },
  });
  await recordApiKeyEvent(deps.events, 'api_key.created', record, deps.now());
  return { apiKey, record };
}

/** Keys the caller may manage, of one merchant or all, newest first. */
export async function listApiKeys(deps: ApiKeyDeps, caller: KeyCaller, filter: { merchantId?: string } = {}): Promise<ApiKeyRecord[]> {
  return (await deps.keyStore.list())
    .filter((k) => mayManage(caller, k.merchantId) && (filter.merchantId === undefined || k.merchantId === filter.merchantId))
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

const KEY_ID_PATTERN = /^key_[A-Za-z0-9]{1,64}$/;

/** One key the caller may manage; otherwise 404, so other merchants' key ids are not confirmed. */
export async function getApiKey(deps: ApiKeyDeps, caller: KeyCaller, id: string): Promise<ApiKeyRecord> {
  const key = KEY_ID_PATTERN.test(id) ? await deps.keyStore.get(id) : undefined;
  if (!key || !mayManage(caller, key.merchantId)) throw new TesseraError('api_key_not_found');
  return key;
}

/** Replaces the lists given (the others keep their entries); applies from the next request on. */
export async function restrictApiKey(
  deps: ApiKeyDeps,
  caller: KeyCaller,
  id: string,
  changes: RestrictionChanges,
): Promise<{ before: ApiKeyRecord; record: ApiKeyRecord }> {
  const checked = parseRestrictionChanges({ ...changes });
  const before = await getApiKey(deps, caller, id);
  if (before.revokedAt !== undefined) {
    throw new TesseraError('invalid_request', { message: 'This key is revoked; its restrictions can no longer change.' });
  }
  const kind = keyKindOf(before);
  const next = {
    allowedCidrs: checked.allowedCidrs ?? before.allowedCidrs,
    allowedDomains: checked.allowedDomains ?? before.allowedDomains ?? [],
    allowedOrigins: checked.allowedOrigins ?? before.allowedOrigins ?? [],
  };
  refuseForKind(kind, before.mode, next);
  const { allowedOrigins, ...hostLists } = next;
  const record = await deps.keyStore.updateRestrictions(
    before.id,
    kind === 'publishable' ? { ...hostLists, allowedOrigins } : hostLists,
    deps.now(),
  );
  if (!record) throw new TesseraError('api_key_not_found');
  const previous = listsOf(before);
  await auditAs(deps, caller, {
    action: 'key.updated',
    merchantId: before.merchantId,
    keyId: before.id,
    details: {
      ...listsOf(record),
      previousAllowedCidrs: previous.allowedCidrs ?? [],
      previousAllowedDomains: previous.allowedDomains ?? [],
      ...(previous.allowedOrigins !== undefined ? { previousAllowedOrigins: previous.allowedOrigins } : {}),
    },
  });
  return { before, record };
}

/** Revokes a key from the next request on; revoking again keeps the first time (`alreadyRevoked`). */
export async function revokeApiKey(
  deps: ApiKeyDeps,
  caller: KeyCaller,
  id: string,
): Promise<{ record: ApiKeyRecord; alreadyRevoked: boolean }> {
  const before = await getApiKey(deps, caller, id);
  const record = await deps.keyStore.revoke(before.id, deps.now());
  if (!record) throw new TesseraError('api_key_not_found');
  const alreadyRevoked = before.revokedAt !== undefined;
  if (!alreadyRevoked) {
    await auditAs(deps, caller, { action: 'key.revoked', merchantId: record.merchantId, keyId: record.id });
    await recordApiKeyEvent(deps.events, 'api_key.revoked', record, deps.now());
  }
  return { record, alreadyRevoked };
}

const DURATION_UNITS_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
/** A rotation longer than this is not a rotation: the old key should simply stay until revoked. */
const MAX_ROTATION_MS = 366 * 86_400_000;

/** `90s`, `30m`, `24h`, `7d` in milliseconds; undefined for anything else, zero, or more than a year. */
export function parseRotationDelay(text: string): number | undefined {
  const match = /^(\d{1,6})([smhd])$/.exec(text.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * DURATION_UNITS_MS[match[2] as keyof typeof DURATION_UNITS_MS];
  return ms > 0 && ms <= MAX_ROTATION_MS ? ms : undefined;
}

/**
 * Schedules a key's revocation `afterMs` from now (an overlapping rotation: old and new key both
 * work until then). Only ever brings it forward: `scheduled` is false when an earlier time stands.
 */
export async function scheduleApiKeyRevocation(
  deps: ApiKeyDeps,
  caller: KeyCaller,
  id: string,
  afterMs: number,
): Promise<{ record: ApiKeyRecord; scheduled: boolean }> {
  if (!Number.isInteger(afterMs) || afterMs <= 0 || afterMs > MAX_ROTATION_MS) {
    throw new TesseraError('parameter_invalid', { param: 'after', message: 'The delay must be from 1 second to 366 days.' });
  }
  const before = await getApiKey(deps, caller, id);
  if (before.revokedAt !== undefined) {
    throw new TesseraError('invalid_request', { message: `${before.id} is already revoked (at ${before.revokedAt})` });
  }
  const wanted = new Date(deps.now().getTime() + afterMs);
  const record = await deps.keyStore.scheduleExpiry(before.id, wanted);
  if (!record) throw new TesseraError('api_key_not_found');
  const scheduled = record.expiresAt === wanted.toISOString();
  if (scheduled) {
    await auditAs(deps, caller, {
      action: 'key.expiry_scheduled',
      merchantId: record.merchantId,
      keyId: record.id,
      details: { expiresAt: record.expiresAt ?? null },
    });
  }
  return { record, scheduled };
}

/**
 * The whole API-key decision of a /v1 route, shared by the auth middleware's logic and "test this
 * key": the same lookup (no cache, so a revocation counts from the next request on every
 * replica), the same constant-time digest comparison, the same restrictions and kind rule.
 */
export async function checkApiKey(
  deps: Pick<ApiKeyDeps, 'keyStore' | 'pepper' | 'previousPeppers'> & { now?: () => Date },
  presented: string | string[] | undefined,
  request: { clientIp: string | undefined; origin: string | undefined },
): Promise<ApiKeyCheck> {
  const { key, found } = await lookUpApiKey(deps, presented);
  if (!key.ok) return { ok: false, code: key.code };
  return decideApiKey(found?.key ?? key, found?.record, deps.now?.() ?? new Date(), request);
}

export interface KeyTestResult {
  accepted: boolean;
  /** The status a /v1 request would get (200 when accepted). */
  status: number;
  code: ApiKeyRefusal | null;
  message: string;
  clientIp: string | undefined;
  origin: string | undefined;
  /** The key, when it is one the caller may manage; otherwise it is reported as unknown. */
  record: ApiKeyRecord | undefined;
}

/**
 * Step 3 of a rotation: would a /v1 request with this key, from this address (default: the
 * caller's own) and this Origin, be accepted? Audited, without the key.
 */
export async function testApiKey(
  deps: ApiKeyDeps,
  caller: KeyCaller,
  input: { apiKey: string; clientIp?: string; origin?: string },
): Promise<KeyTestResult> {
  let clientIp = caller.ip;
  if (input.clientIp !== undefined) {
    const single = canonicalCidrEntry(input.clientIp);
    if (!single.ok || !/\/(32|128)$/.test(single.value)) {
      throw new TesseraError('parameter_invalid', { param: 'clientIp', message: '"clientIp" must be a single IPv4 or IPv6 address.' });
    }
    clientIp = single.value.replace(/\/(32|128)$/, '');
  }
  const origin = input.origin;
  const result = await checkApiKey(deps, input.apiKey.trim(), { clientIp, origin });
  // A key of a merchant this caller cannot manage is reported exactly like an unknown key.
  const visible = result.record !== undefined && mayManage(caller, result.record.merchantId) ? result.record : undefined;
  const accepted = result.ok && visible !== undefined;
  const code = accepted ? null : visible === undefined || result.ok ? 'api_key_invalid' : result.code;
  await auditAs(deps, caller, {
    action: 'key.tested',
    merchantId: visible?.merchantId ?? caller.merchantId,
    keyId: visible?.id ?? null,
    details: { accepted, code, clientIp: clientIp ?? null, origin: origin ?? null },
  });
  const refusal = code === null ? undefined : new TesseraError(code);
  return {
    accepted,
    status: refusal?.status ?? 200,
    code,
    message: refusal?.message ?? 'The gateway accepts this key for such a request.',
    clientIp,
    origin,
    record: visible,
  };
}

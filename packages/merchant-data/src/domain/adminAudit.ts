import crypto from 'node:crypto';

export type AuditAction =
  | 'login.succeeded'
  | 'login.failed'
  | 'login.throttled'
  | 'login.unlocked'
  | 'logout'
  | 'mfa.enabled'
  | 'mfa.reset'
  | 'key.created'
  | 'key.updated'
  | 'key.revoked'
  | 'key.expiry_scheduled'
  | 'key.tested'
  | 'merchant.psp_hosts_updated'
  | 'merchant.return_urls_updated'
  | 'merchant.form_signing_secret_shown'
  | 'merchant.shred_requested'
  | 'merchant.shred_approved'
  | 'merchant.shred_cancelled'
  | 'merchant.export_recipient_registered'
  | 'merchant.export_recipient_removed'
  | 'merchant.export_requested'
  | 'merchant.export_approved'
  | 'merchant.export_cancelled'
  | 'merchant.export_downloaded'
  | 'import.created'
  | 'import.uploaded'
  | 'import.report_downloaded'
  | 'page.script_authorized'
  | 'page.policy_accepted'
  | 'page.inventory_exported'
  | 'webhook_endpoint.created'
  | 'webhook_endpoint.deleted'
  | 'webhook_endpoint.secret_rotated'
  | 'webhook_endpoint.enabled'
  | 'webhook_delivery.resent'
  | 'route.applied'
  | 'route.deleted';

/**
 * One line of the audit log: who did what, when, from where, to which key. Only identifiers and
 * non-secret settings: never an API key, a digest, a password or a session id.
 */
export interface AuditRecord {
  id: string;
  at: string;
  action: AuditAction;
  /** The operator's email; null for a failed login with an unknown email (the input is not echoed). */
  actor: string | null;
  operatorId: string | null;
  ip: string | null;
  merchantId: string | null;
  keyId: string | null;
  details: Record<string, string | number | boolean | string[] | null>;
}

export interface AuditInput {
  action: AuditAction;
  actor?: { id: string; email: string } | null;
  ip: string | undefined;
  merchantId?: string | null;
  keyId?: string | null;
  details?: AuditRecord['details'];
  now: Date;
}

export function buildAuditRecord(input: AuditInput): AuditRecord {
  return {
    id: `aud_${crypto.randomBytes(12).toString('base64url')}`,
    at: input.now.toISOString(),
    action: input.action,
    actor: input.actor?.email ?? null,
    operatorId: input.actor?.id ?? null,
    ip: input.ip ?? null,
    merchantId: input.merchantId ?? null,
    keyId: input.keyId ?? null,
    details: input.details ?? {},
  };
}

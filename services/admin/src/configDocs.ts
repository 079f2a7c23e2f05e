import type { ConfigDocs } from '@tessera/common';

/** docs/configuration.md's text for the admin service's own variables (shared ones: @tessera/common's sharedConfigDocs). */
export const adminConfigDocs: ConfigDocs = {
  ADMIN_PORT: { text: 'HTTP port of the admin service: the dashboard (`/dashboard/`), the admin API (`/admin/v1`) and its probes' },
  ADMIN_BIND: { text: 'bind address of the admin service (an internal address; `0.0.0.0` in containers)' },
  ADMIN_SESSION_IDLE_SECONDS: { text: 'a dashboard session ends after 15 idle minutes (PCI DSS 8.2.8)' },
  ADMIN_SESSION_MAX_SECONDS: { text: 'a dashboard session ends at most 8 hours after login' },
  ADMIN_LOGIN_WINDOW_SECONDS: { text: 'the sliding window of the sign-in lockout counts below' },
  ADMIN_LOGIN_MAX_PER_IP: { text: 'sign-in attempts per client address per window, whatever the account (spraying)' },
  ADMIN_LOGIN_MAX_PER_ACCOUNT: {
    default: '`10` (at most 10)',
    text: 'sign-in lockout (PCI DSS 8.3.4): failed sign-ins per account in the window before it is locked for `ADMIN_LOGIN_LOCKOUT_SECONDS`; `429` with `Retry-After` ([SECURITY.md](SECURITY.md#dashboard-sign-in))',
  },
  ADMIN_LOGIN_MAX_PER_SOURCE: {
    text: 'failed sign-ins per source (address or trusted browser) for one account in the window before it is locked',
  },
  ADMIN_LOGIN_LOCKOUT_SECONDS: { default: '`1800` (at least 1800 in production)', text: 'how long a locked account stays locked' },
  ADMIN_MFA_REQUIRED: {
    default: '`true` in production, else `false`',
    text: 'every operator needs a second factor (TOTP); the first sign-in sets it up. Cannot be `false` in production',
  },
  ADMIN_TRUSTED_DEVICE_DAYS: {
    text: 'a browser that signed in with the second factor is exempt from the account lockout this long (never from the password and the code)',
  },
  API_KEY_EXPIRING_SOON_DAYS: {
    text: 'a key whose scheduled revocation (`keys revoke --after`, an overlapping rotation) is at most this many days away gets `api_key.expiring_soon`, once per key and expiry time',
  },
  ADMIN_AUDIT_MAX_ENTRIES: {
    alsoUsedBy: 'keys CLI',
    text: 'the audit log keeps this many newest entries (overall and per merchant)',
  },
  EXPORT_MAX_PER_MERCHANT_PER_DAY: {
    text: 'card export requests per merchant per UTC day (cancelled ones count); more answer `429 export_rate_limited` until midnight UTC ([migration.md](migration.md#leaving-tessera-export))',
  },
  IMPORT_UPLOAD_MAX_BYTES: {
    text: 'the largest card import file `PUT /admin/v1/imports/{id}/file` takes (`413` above it); Redis holds the file, encrypted, until the import ends (about 110 bytes per card)',
  },
  TESSERA_DEV_ADMIN_EMAIL: { text: 'outside production, the e-mail of the development dashboard operator' },
  TESSERA_DEV_ADMIN_PASSWORD: {
    default: 'unset (`npm start` sets it)',
    text: 'outside production, a dashboard operator for every merchant with this password (refused in production)',
  },
};

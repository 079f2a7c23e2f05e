import type { ConfigDocs } from '@tessera/common';

/** docs/configuration.md's text for the vault's own variables (shared ones: @tessera/common's sharedConfigDocs). */
export const vaultConfigDocs: ConfigDocs = {
  VAULT_WRITE_ACK: {
    default: '`none`',
    text: '`aof` or `replica:N[:timeoutMs]`: `201` only after the card write is fsynced / on N replicas (see [Running in production](operations.md#running-in-production))',
  },
  VAULT_KEYS: {
    default: 'generated in development',
    alsoUsedBy: 'vault CLI',
    text: "key-encryption keys: comma-separated `keyId:base64` 32-byte AES keys; the last one wraps new records' data keys, all unwrap. Rotate with `npm run vault -- rotate` / `rewrap` / `status` (docs/adr/0004)",
  },
  VAULT_KEK_PROVIDER: {
    alsoUsedBy: 'vault CLI',
    text: "whose newest key wraps new data keys: `env` (`VAULT_KEYS`) or `pkcs11` (an HSM). The other provider's keys, if configured, only unwrap, so `npm run vault -- rewrap` moves records between them (docs/SECURITY.md, Key custody; docs/adr/0009)",
  },
  PKCS11_MODULE: {
    alsoUsedBy: 'vault CLI',
    text: "path of the HSM vendor's PKCS#11 library, e.g. `/usr/lib/softhsm/libsofthsm2.so`, `/opt/cloudhsm/lib/libcloudhsm_pkcs11.so`",
  },
  PKCS11_TOKEN_LABEL: { alsoUsedBy: 'vault CLI', text: 'the token by its label; this or `PKCS11_SLOT`, exactly one' },
  PKCS11_SLOT: { alsoUsedBy: 'vault CLI', text: 'the slot by its id; this or `PKCS11_TOKEN_LABEL`, exactly one' },
  PKCS11_PIN: { alsoUsedBy: 'vault CLI', text: "the token's crypto-user PIN; this or `PKCS11_PIN_FILE`, exactly one. Never logged" },
  PKCS11_PIN_FILE: {
    alsoUsedBy: 'vault CLI',
    text: 'a file holding the PIN (a mounted secret; one trailing newline ignored); this or `PKCS11_PIN`, exactly one',
  },
  PKCS11_KEYS: {
    alsoUsedBy: 'vault CLI',
    text: "HSM key-encryption keys as `keyId:label` (the key's `CKA_LABEL`), newest last. Key ids must not repeat those of `VAULT_KEYS`. Keys must be AES-256, sensitive, non-extractable; `npm run vault -- rotate` with `VAULT_KEK_PROVIDER=pkcs11` generates one in the HSM",
  },
  CVV_TTL_SECONDS: { text: 'how long a CVV is kept after tokenization' },
  CARD_GRACE_DAYS: { text: 'card data is kept this long after the expiry month has ended' },
  TOKEN_EXPIRING_SOON_DAYS: {
    text: 'a stored card whose expiry month ends within this many days gets `token.expiring_soon`, once per token and expiry month',
  },
  TOKEN_EXPIRING_SOON_PASS_SECONDS: {
    text: "`token.expiring_soon` reads every card record (no index): a new pass starts this long after the last one began, or as soon as a month's end enters the window; a pass goes on at each `EVENT_SWEEP_INTERVAL_SECONDS` tick for at most half of it ([webhooks.md](webhooks.md#where-events-come-from))",
  },
  IMPORT_POLL_INTERVAL_MS: {
    text: 'how often a vault looks for a queued card import to run ([migration.md](migration.md#importing-cards))',
  },
  IMPORT_LEASE_MS: {
    text: 'a running import is held by one vault under a lease renewed while it works; a vault that dies mid-import is replaced by another (which resumes from the last checkpoint) this long after',
  },
  IMPORT_BATCH_SIZE: {
    text: 'cards an import checkpoints at once (at most 10000); two batches are tokenized at a time, so memory grows with it, not with the file',
  },
  IMPORT_KEEP_DAYS: {
    text: "how long a finished import's status and encrypted report stay downloadable; its uploaded file and key are deleted at once",
  },
  EXPORT_FILE_TTL_SECONDS: {
    text: "how long a card export's file (OpenPGP ciphertext to the recipient's key, in Redis) stays downloadable ([migration.md](migration.md#leaving-tessera-export))",
  },
  BROWSER_TOKEN_TTL_SECONDS: {
    text: 'a token made in a browser (provisional) is deleted this long after it was made, card and CVV, unless `POST /v1/token/{token}/retain` keeps it',
  },
  RENDER_MAX_BYTES: {
    default: '`2097152` (2 MiB)',
    text: 'the most bytes a PSP body may have once card data is filled in (`422 rendered_body_too_large`); at most 11 MiB (a render travels in one 12 MiB gRPC message)',
  },
};

import { randomBytes } from 'node:crypto';

/**
 * Card imports' Redis layout (docs/adr/0015-card-import.md), shared by the vault (which alone holds
 * the import keys and reads the files) and the admin service (which takes an operator's import
 * through /admin/v1 and never sees a key or a card). Everything of one import shares its {id} hash
 * tag. The parts an admin may touch and the ones it may not are told apart by their suffix, so
 * that Redis ACL key patterns (deploy/redis/users.acl) can grant the first and refuse the second:
 *   admin and vault:  :meta (status, counts, public keys), :upload (ciphertext chunks),
 *                     :report (ciphertext to the merchant's key; read only for the admin),
 *                     tessera:import:queue and tessera:import:create-queue
 *   vault only:       :key (the sealed private key), :outcomes (the sealed checkpoint rows), :lease
 */
export type CardImportPart = 'meta' | 'key' | 'upload' | 'outcomes' | 'report' | 'lease';

export const cardImportKey = (id: string, part: CardImportPart): string => `tessera:import:{${id}}:${part}`;

/** Imports with a file uploaded, for a vault's import worker. */
export const CARD_IMPORT_QUEUE_KEY = 'tessera:import:queue';
/** Imports an operator asked for through the admin API, waiting for a vault to make their key pair. */
export const CARD_IMPORT_CREATE_QUEUE_KEY = 'tessera:import:create-queue';

export const CARD_IMPORT_ID_PATTERN = /^imp_[A-Za-z0-9_-]{22}$/;

export function newCardImportId(): string {
  return `imp_${randomBytes(16).toString('base64url')}`;
}

/**
 * creating: asked for through the admin API, no key yet; awaiting_upload: the public key is ready;
 * queued, running: a vault's worker has it; done, failed: ended (the key and the file are gone).
 */
export const CARD_IMPORT_STATES = ['creating', 'awaiting_upload', 'queued', 'running', 'done', 'failed'] as const;
export type CardImportState = (typeof CARD_IMPORT_STATES)[number];

export const CARD_IMPORT_FORMATS = ['jsonl', 'csv', 'stripe'] as const;
export const CARD_IMPORT_KEY_TYPES = ['curve25519', 'rsa4096'] as const;

/** The counters of a new import's status hash, whichever service creates it. */
export const CARD_IMPORT_NEW_COUNTERS = {
  processed: '0',
  imported: '0',
  duplicates: '0',
  failed: '0',
  uploadedBytes: '0',
  uploadChunks: '0',
  reportChunks: '0',
} as const;

/** An import as the admin service may see it: its status hash, never the key or the sealed rows. */
export interface CardImportStatus {
  id: string;
  merchantId: string;
  mode: string;
  format: string;
  state: CardImportState;
  createdAt: string;
  /** Armored; empty while creating. */
  publicKey: string;
  publicKeyFingerprint: string;
  processed: number;
  imported: number;
  duplicates: number;
  failed: number;
  uploadedBytes: number;
  uploadChunks: number;
  records: number | undefined;
  failure: string | undefined;
  startedAt: string | undefined;
  finishedAt: string | undefined;
  reportChunks: number;
}

function int(value: string | undefined): number {
  const n = Number(value ?? 0);
  return Number.isFinite(n) ? n : 0;
}

function stateOf(value: string | undefined): CardImportState {
  // 'uploading' is what the vault's CLI wrote before the admin API existed.
  if (value === 'uploading') return 'awaiting_upload';
  return (CARD_IMPORT_STATES as readonly string[]).includes(value ?? '') ? (value as CardImportState) : 'failed';
}

/** An import's status hash (`:meta`) read back; null when there is none. Both services read it the same way. */
export function cardImportStatusOf(id: string, h: Record<string, string>): CardImportStatus | null {
  if (h.merchantId === undefined) return null;
  return {
    id,
    merchantId: h.merchantId,
    mode: h.mode ?? '',
    format: h.format ?? '',
    state: stateOf(h.state),
    createdAt: h.createdAt ?? '',
    publicKey: h.publicKey ?? '',
    publicKeyFingerprint: h.publicKeyFingerprint ?? '',
    processed: int(h.processed),
    imported: int(h.imported),
    duplicates: int(h.duplicates),
    failed: int(h.failed),
    uploadedBytes: int(h.uploadedBytes),
    uploadChunks: int(h.uploadChunks),
    records: h.records === undefined ? undefined : int(h.records),
    failure: h.failure || undefined,
    startedAt: h.startedAt || undefined,
    finishedAt: h.finishedAt || undefined,
    reportChunks: int(h.reportChunks),
  };
}

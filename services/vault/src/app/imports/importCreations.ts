import { randomBytes } from 'node:crypto';
import type { KeyRing } from '../../domain/keyRing';
import { keyModeOf } from '../../domain/tokenMode';
import { isImportFormat } from '../../domain/importFormats';
import { generateImportKeyPair, readRecipientKey, type ImportKeyType } from '../../domain/importKey';
import type { RedisImportCreationStore } from '../../store/importCreationStore';
import type { ImportStorePort } from './ports';
import { pollQueue } from './pollQueue';

/**
 * Imports asked for through the admin API (docs/adr/0015-card-import.md, "The admin API"): the
 * admin service holds no key ring, so it writes a request and a vault answers it with the import's
 * key pair, as `vault import create` does. The lease of the import keeps two vaults from making two
 * key pairs for one import; a vault that dies before answering leaves the request for the next.
 */
export interface ImportCreationDeps {
  store: Pick<ImportStorePort, 'get' | 'takeLease' | 'releaseLease'>;
  creations: Pick<RedisImportCreationStore, 'pending' | 'keyTypeOf' | 'complete' | 'refuse' | 'forget'>;
  keyRing: KeyRing;
  leaseMs: number;
  keepMs: number;
  now: () => Date;
  log: (fields: Record<string, unknown>, message: string) => void;
}

/** Why a request was refused: a code the operator sees in the status, never the key itself. */
function refusalOf(meta: { mode: string; format: string }, keyType: string | undefined): string | undefined {
  if (keyModeOf(meta.mode) === undefined || !isImportFormat(meta.format)) return 'import_request_invalid';
  if (keyType !== undefined && keyType !== 'curve25519' && keyType !== 'rsa4096') return 'import_request_invalid';
  return undefined;
}

/** Answers one creation request; true when it is answered (made, refused, or nothing left to do). */
export async function answerImportCreation(deps: ImportCreationDeps, id: string, holder: string): Promise<boolean> {
  const meta = await deps.store.get(id);
  if (meta === null || meta.state !== 'creating') {
    await deps.creations.forget(id);
    return true;
  }
  if (!(await deps.store.takeLease(id, holder, deps.leaseMs))) return false;
  try {
    const keyType = await deps.creations.keyTypeOf(id);
    const refusal =
      refusalOf(meta, keyType) ??
      (await readRecipientKey(meta.reportRecipientKey).then(
        () => undefined,
        () => 'report_key_unusable',
      ));
    if (refusal !== undefined) {
      await deps.creations.refuse(id, refusal, deps.now(), deps.keepMs);
      deps.log({ importId: id, failure: refusal }, 'card import request refused');
      return true;
    }
    const pair = await generateImportKeyPair(deps.keyRing, id, (keyType ?? 'curve25519') as ImportKeyType);
    await deps.creations.complete(id, pair);
    deps.log({ importId: id, merchantId: meta.merchantId }, 'card import key made for an admin API request');
    return true;
  } finally {
    await deps.store.releaseLease(id, holder).catch(() => undefined);
  }
}

export interface ImportCreationWorker {
  stop(): Promise<void>;
}

/** Every pollIntervalMs, the pending creation requests, one at a time (a key pair takes a moment). */
export function startImportCreationWorker(options: ImportCreationDeps & { pollIntervalMs: number }): ImportCreationWorker {
  const holder = randomBytes(8).toString('hex');
  return pollQueue({
    pollIntervalMs: options.pollIntervalMs,
    list: () => options.creations.pending(),
    each: async (id) => {
      await answerImportCreation(options, id, holder);
    },
    onError: (id, err) =>
      options.log({ importId: id, err: err instanceof Error ? err.message : 'unknown' }, 'card import request not answered; retried later'),
  });
}

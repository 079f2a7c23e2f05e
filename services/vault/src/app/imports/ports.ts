import type { TesseraError } from '@tessera/common';
import type { CardToTokenize, TokenRecordView } from '../../domain/card';
import type { RedisImportStore } from '../../store/importStore';

/** What the import use cases need of the store (store/importStore.ts implements it over Redis). */
export type ImportStorePort = Pick<
  RedisImportStore,
  | 'create'
  | 'get'
  | 'clearUpload'
  | 'appendUpload'
  | 'uploadChunk'
  | 'queue'
  | 'queued'
  | 'takeLease'
  | 'renewLease'
  | 'releaseLease'
  | 'markRunning'
  | 'checkpoint'
  | 'outcomeBatches'
  | 'outcomeBatch'
  | 'clearReport'
  | 'appendReport'
  | 'reportChunk'
  | 'finish'
  | 'forget'
>;

/**
 * The vault's own tokenize path (app/vault.ts), a batch at a time: each card checked and
 * deduplicated like POST /v1/token with dedupe, one outcome per card in order.
 */
export interface ImportTokenizer {
  tokenizeDeduplicatedMany(cards: readonly CardToTokenize[]): Promise<Array<TokenRecordView | TesseraError>>;
}

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

/** The vault's own tokenize path (app/vault.ts): each card checked and deduplicated like POST /v1/token with dedupe. */
export interface ImportTokenizer {
  tokenize(card: CardToTokenize): Promise<TokenRecordView>;
}

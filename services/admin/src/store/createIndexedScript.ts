import type { ScriptDefinition } from '@tessera/common/redis';

/**
 * Creates a record under a unique index (an API key's digest, an operator's email). The index is
 * claimed first, so two processes creating the same one cannot both succeed; then the record is
 * written and its id added to the set of all. KEYS: index, record, set of ids; ARGV: id, record.
 * Replies 1 when created, 0 when the index was already taken.
 */
export const CREATE_INDEXED: ScriptDefinition = {
  numberOfKeys: 3,
  lua: `
if redis.call('SET', KEYS[1], ARGV[1], 'NX') then
  redis.call('SET', KEYS[2], ARGV[2])
  redis.call('SADD', KEYS[3], ARGV[1])
  return 1
end
return 0`,
};

export interface CreateIndexedScript {
  tesseraCreateIndexed(indexKey: string, recordKey: string, allKey: string, id: string, record: string): Promise<number>;
}

import { Cluster } from 'ioredis';
import type { Logger, WriteAck } from '@tessera/common';
import { AcknowledgedWriter, defineScripts, primariesOf, redisUnavailable, type RedisClient } from '@tessera/common/redis';

/**
 * Where the merchants' forward-proxy CAs live (domain/caKey.ts holds their sealed form): one key per
 * merchant, `tessera:ca:{m:<merchantId>}`, in the merchant's slot like its other data. Only the
 * vault's Redis user may touch it (deploy/redis/users.acl).
 */
export interface CaKeyStore {
  /** The stored CA of the merchant, or null before its first use. */
  get(merchantId: string): Promise<string | null>;
  /** Stores `stored` unless the merchant has a CA already (another replica was first); answers the one kept. */
  createIfAbsent(merchantId: string, stored: string): Promise<string>;
  /** Compare-and-set for rewrap; false when it changed meanwhile. */
  replace(merchantId: string, expected: string, next: string): Promise<boolean>;
  /** Every merchant that has a CA (rewrap and `vault status` walk them; there is one key per merchant). */
  merchants(): Promise<string[]>;
  /**
   * Deletes the merchant's CA (crypto-shredding with mode "all"): its key is sealed under the root
   * ring, not the merchant's KEKs, so only deleting the record destroys it. True when there was one.
   */
  delete(merchantId: string): Promise<boolean>;
}

const CA_KEY_PREFIX = 'tessera:ca:{m:';
export const caKeyOf = (merchantId: string): string => `tessera:ca:{m:${merchantId}}`;

function merchantOfKey(key: string): string | undefined {
  return key.startsWith(CA_KEY_PREFIX) && key.endsWith('}') ? key.slice(CA_KEY_PREFIX.length, -1) : undefined;
}

/** The first vault to make a merchant's CA wins (SET NX); the loser answers the winner's. */
const CA_CREATE_IF_ABSENT = `
redis.call('SET', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[1])`;

const CA_REPLACE_IF_UNCHANGED = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
  return 1
end
return 0`;

interface CaScripts {
  tesseraCaReplaceIfUnchanged(key: string, expected: string, next: string): Promise<number>;
}

export class RedisCaKeyStore implements CaKeyStore {
  private readonly writer: AcknowledgedWriter;
  private readonly scripts: CaScripts;

  /**
   * A CA is written with the card store's acknowledgement (VAULT_WRITE_ACK): one lost in a failover
   * would be made again, and every client that trusted the first would stop trusting the proxy.
   */
  constructor(
    private readonly redis: RedisClient,
    writeAck: WriteAck,
    logger: Logger,
  ) {
    this.writer = new AcknowledgedWriter(redis, writeAck, logger, 'VAULT_WRITE_ACK');
    this.scripts = defineScripts<CaScripts & { tesseraCaCreateIfAbsent: unknown }>(redis, {
      tesseraCaCreateIfAbsent: { numberOfKeys: 1, lua: CA_CREATE_IF_ABSENT },
      tesseraCaReplaceIfUnchanged: { numberOfKeys: 1, lua: CA_REPLACE_IF_UNCHANGED },
    });
  }

  async get(merchantId: string): Promise<string | null> {
    try {
      return await this.redis.get(caKeyOf(merchantId));
    } catch (err) {
      throw redisUnavailable(err);
    }
  }

  async createIfAbsent(merchantId: string, stored: string): Promise<string> {
    let kept: unknown;
    try {
      [kept] = await this.writer.write([['tesseraCaCreateIfAbsent', caKeyOf(merchantId), stored]]);
    } catch (err) {
      throw redisUnavailable(err);
    }
    if (typeof kept !== 'string') throw redisUnavailable(new Error('the CA was not stored'));
    return kept;
  }

  async replace(merchantId: string, expected: string, next: string): Promise<boolean> {
    try {
      return (await this.scripts.tesseraCaReplaceIfUnchanged(caKeyOf(merchantId), expected, next)) === 1;
    } catch (err) {
      throw redisUnavailable(err);
    }
  }

  /** Acknowledged like its creation: a delete lost in a failover would bring the shredded merchant's CA back. */
  async delete(merchantId: string): Promise<boolean> {
    let removed: unknown;
    try {
      [removed] = await this.writer.write([['del', caKeyOf(merchantId)]]);
    } catch (err) {
      throw redisUnavailable(err);
    }
    return removed === 1;
  }

  async merchants(): Promise<string[]> {
    const nodes = this.redis instanceof Cluster ? primariesOf(this.redis) : [this.redis];
    const found = new Set<string>();
    try {
      for (const node of nodes) {
        let cursor = '0';
        do {
          const [next, keys] = await node.scan(cursor, 'MATCH', `${CA_KEY_PREFIX}*`, 'COUNT', 500);
          for (const key of keys) {
            const merchant = merchantOfKey(key);
            if (merchant !== undefined) found.add(merchant);
          }
          cursor = next;
        } while (cursor !== '0');
      }
    } catch (err) {
      throw redisUnavailable(err);
    }
    return [...found].sort();
  }
}

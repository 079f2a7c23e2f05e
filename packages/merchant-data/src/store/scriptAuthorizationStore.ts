import type { Redis } from 'ioredis';
import type { KeyMode } from '@tessera/common';
import { redisUnavailable } from '@tessera/common/redis';
import { merchantSlot } from '../domain/slots';

/**
 * An operator's decision that a script may run on a payment page, with why (PCI DSS 6.4.3: "a
 * method is implemented to confirm that each script is authorized", "written business or
 * technical justification"). Bound to the hash it was given for: a changed script needs a new one.
 */
export interface ScriptAuthorization {
  scriptKey: string;
  /** The hash authorized; null: a script that could not be hashed, authorized by its URL alone. */
  hash: string | null;
  justification: string;
  by: string;
  at: string;
}

/** An operator's acceptance of the page's current policy as its baseline (a deliberate change of the header). */
export interface PolicyAcceptance {
  /** The meta policy accepted. */
  policy: string | null;
  /** The header policy accepted (as the last violation report showed it); absent in acceptances before it was kept. */
  headerPolicy?: string | null;
  justification: string;
  by: string;
  at: string;
}

export interface PageAuthorizations {
  scripts: Map<string, ScriptAuthorization>;
  policy: PolicyAcceptance | undefined;
}

/** The dashboard's side: only operators write it; the fields service, which takes the pages' reports, has no access. */
export interface ScriptAuthorizationStore {
  forPage(merchantId: string, mode: KeyMode, pageId: string): Promise<PageAuthorizations>;
  authorizeScript(merchantId: string, mode: KeyMode, pageId: string, authorization: ScriptAuthorization): Promise<void>;
  acceptPolicy(merchantId: string, mode: KeyMode, pageId: string, acceptance: PolicyAcceptance): Promise<void>;
}

export const PAGE_AUTHORIZATIONS_PREFIX = 'tessera:page-authorizations:';

const keyOf = (merchantId: string, mode: KeyMode, pageId: string): string =>
  `${PAGE_AUTHORIZATIONS_PREFIX}${merchantSlot(merchantId)}:${mode}:${pageId}`;
const POLICY_FIELD = 'policy';
const SCRIPT_FIELD = 'script:';

/**
 * One hash per page, `tessera:page-authorizations:{m:<id>}:<mode>:<page>`: `script:<key>` →
 * authorization, `policy` → acceptance. No expiry: it is the evidence, and only operators add to it
 * (at most one entry per script the page inventory holds, which is capped).
 */
export class RedisScriptAuthorizationStore implements ScriptAuthorizationStore {
  constructor(private readonly redis: Redis) {}

  async forPage(merchantId: string, mode: KeyMode, pageId: string): Promise<PageAuthorizations> {
    try {
      const all = await this.redis.hgetall(keyOf(merchantId, mode, pageId));
      const scripts = new Map<string, ScriptAuthorization>();
      let policy: PolicyAcceptance | undefined;
      for (const [field, raw] of Object.entries(all)) {
        try {
          if (field === POLICY_FIELD) policy = JSON.parse(raw) as PolicyAcceptance;
          else if (field.startsWith(SCRIPT_FIELD)) scripts.set(field.slice(SCRIPT_FIELD.length), JSON.parse(raw) as ScriptAuthorization);
        } catch {
          // A record that does not parse is no authorization.
        }
      }
      return { scripts, policy };
    } catch (err) {
      throw redisUnavailable(err);
    }
  }

  async authorizeScript(merchantId: string, mode: KeyMode, pageId: string, authorization: ScriptAuthorization): Promise<void> {
    try {
      await this.redis.hset(keyOf(merchantId, mode, pageId), SCRIPT_FIELD + authorization.scriptKey, JSON.stringify(authorization));
    } catch (err) {
      throw redisUnavailable(err);
    }
  }

  async acceptPolicy(merchantId: string, mode: KeyMode, pageId: string, acceptance: PolicyAcceptance): Promise<void> {
    try {
      await this.redis.hset(keyOf(merchantId, mode, pageId), POLICY_FIELD, JSON.stringify(acceptance));
    } catch (err) {
      throw redisUnavailable(err);
    }
  }
}

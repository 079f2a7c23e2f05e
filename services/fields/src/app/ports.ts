import type {
  AttachCvvRequest,
  CompletionCall,
  CompletionCallAnswer,
  Readiness,
  TokenizeRequest,
  TokenRecord__Output,
} from '@tessera/protos';
import type { EventRecord, PageInventoryWriter } from '@tessera/merchant-data';

/**
 * What the fields service's use cases need from outside. The vault is reached through the shared
 * gRPC calls of @tessera/protos (transport/vaultPort.ts narrows them to this); the stores are
 * @tessera/merchant-data's and @tessera/edge's own interfaces.
 */

export interface CallContext {
  requestId: string;
}

/** A card a shopper typed: always a provisional token, which expires unless the merchant's server retains it. */
export type ProvisionalTokenize = Omit<TokenizeRequest, 'provisional' | 'dedupe'>;

/** A CVC for an existing token, always under the CVC session a secret key opened for it (the vault claims it). */
export type GrantedCvcAttach = Omit<AttachCvvRequest, 'cvcSession'> & { cvcSession: string };

/**
 * The vault as the fields service may use it, and all its mTLS identity is allowed: make a
 * provisional token, attach a CVC under a grant. No read, update, retain or delete: a compromise
 * of the most exposed origin yields no stored card and no lasting token.
 */
export interface FieldsVault {
  tokenize(request: ProvisionalTokenize, ctx: CallContext): Promise<TokenRecord__Output>;
  attachCvv(request: GrantedCvcAttach, ctx: CallContext): Promise<TokenRecord__Output>;
  ready(ctx: CallContext & { timeoutMs: number }): Promise<Readiness>;
  close(): void;
}

/**
 * The proxy as the fields service may use it (its caller policy allows this identity nothing
 * else): POST a signed JSON body to a merchant's completion endpoint and read the bounded answer.
 * Any failure (refused destination, timeout, unreachable) rejects: the caller cannot know whether
 * the merchant acted on the call.
 */
export interface MerchantCompletions {
  callCompletion(request: CompletionCall, ctx: CallContext): Promise<CompletionCallAnswer>;
  close(): void;
}

/**
 * Where the payment pages' script inventory is kept (@tessera/merchant-data's RedisPageInventoryStore):
 * this service reads one page and writes what a report changed; the operators' authorizations are
 * not reachable from here.
 */
export type PageInventoryPort = Pick<PageInventoryWriter, 'loadPage' | 'savePage' | 'saveViolations'>;

/**
 * Where this service records the events it emits (form_session.completed and .expired,
 * card_testing.suspected): @tessera/merchant-data's RedisEventStore. `recordOnce` keeps an event
 * to one per object however often a sweep or a retry sees it.
 */
export interface EventRecorder {
  record(event: EventRecord): Promise<void>;
  recordOnce(event: EventRecord, once: string, markForMs?: number): Promise<boolean>;
}

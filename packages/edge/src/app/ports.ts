import type { RateLimitRefusal } from '../domain/rateLimit';
import type { WindowCount } from '../store/rateLimitCounter';

/**
 * The API rate limits as authentication uses them (transport/rateLimit.ts RateLimiter). Each
 * answers the refusal to send (429 with retryAfterSeconds), or undefined; the counter store's
 * failures fail open inside it.
 */
export interface AuthRateLimits {
  failedAuthBlock(clientIp: string | undefined, requestId: string): Promise<RateLimitRefusal | undefined>;
  recordFailedAuth(clientIp: string | undefined, requestId: string): Promise<RateLimitRefusal | undefined>;
  recordKeyRequest(key: { merchantId: string; id: string }, requestId: string): Promise<RateLimitRefusal | undefined>;
  keyRequestWindowMs(): number | undefined;
  keyRequestRefusalOf(window: WindowCount): RateLimitRefusal | undefined;
  takeBackKeyRequest(key: { merchantId: string; id: string }, requestId: string): void;
}

/** The card-testing limits' count of a browser tokenization attempt (transport/browserLimits.ts BrowserTokenLimiter). */
export interface CardTestingAttempts {
  recordAttempt(
    keyId: string,
    clientIp: string | undefined,
    solution: string | undefined,
    requestId: string,
  ): Promise<{ refusal?: RateLimitRefusal | undefined; underAttack?: boolean | undefined }>;
}

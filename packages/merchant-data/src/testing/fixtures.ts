import { issueApiKey, type ApiKeyRecord, type NewKeyParams } from '../domain/apiKeys';
import type { RequestFacts } from '../domain/requestLog';

/** The API-key pepper of the unit tests. */
export const TEST_PEPPER = 'unit-test-pepper-unit-test-pepper-0123';

/** A freshly issued test-mode key record of `merchantId`, as a key store receives it. */
export function aKeyRecord(merchantId = 'm1', allowedCidrs: string[] = [], more: Partial<NewKeyParams> = {}): ApiKeyRecord {
  return issueApiKey({ merchantId, mode: 'test', allowedCidrs, pepper: TEST_PEPPER, now: new Date(), ...more }).record;
}

/** A finished POST /v1/token of merchant acme, as the request log receives it. */
export function aRequest(overrides: Partial<RequestFacts> = {}): RequestFacts {
  return {
    at: new Date(),
    merchantId: 'acme',
    requestId: 'req_1',
    keyId: 'key_1',
    mode: 'test',
    method: 'POST',
    route: '/v1/token',
    path: '/v1/token',
    status: 201,
    code: null,
    ms: 3,
    aborted: false,
    ...overrides,
  };
}

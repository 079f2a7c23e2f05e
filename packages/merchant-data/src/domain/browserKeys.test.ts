import { TEST_PEPPER } from '../testing/fixtures';
import { presentedKeyOf } from './apiKeyDecision';
import { buildApiKeyRecord, generateApiKey, type ApiKeyKind } from './apiKeys';
import { decideBrowserKey } from './browserKeys';

const NOW = new Date('2026-11-23T12:00:00Z');
const SHOP = 'https://shop.example';

function aKey(kind: ApiKeyKind, overrides: Record<string, unknown> = {}) {
  const apiKey = generateApiKey('test', kind);
  const record = buildApiKeyRecord(apiKey, {
    merchantId: 'shop',
    mode: 'test',
    kind,
    allowedCidrs: [],
    ...(kind === 'publishable' ? { allowedOrigins: [SHOP] } : {}),
    pepper: TEST_PEPPER,
    now: NOW,
  });
  return { presented: presentedKeyOf(TEST_PEPPER, apiKey), record: { ...record, ...overrides } };
}

describe('decideBrowserKey', () => {
  it('accepts a publishable key for a page on one of its allowed origins', () => {
    const { presented, record } = aKey('publishable');
    expect(decideBrowserKey(presented, record, NOW, SHOP)).toEqual({ ok: true, record });
  });

  it('refuses a page on any other origin, or none', () => {
    const { presented, record } = aKey('publishable');
    expect(decideBrowserKey(presented, record, NOW, 'https://shop.example.evil')).toMatchObject({ ok: false, code: 'origin_not_allowed' });
    expect(decideBrowserKey(presented, record, NOW, undefined)).toMatchObject({ ok: false, code: 'origin_not_allowed' });
  });

  it('refuses a secret key, a revoked key and an expired key like an unknown one', () => {
    const secret = aKey('secret');
    expect(decideBrowserKey(secret.presented, secret.record, NOW, SHOP)).toMatchObject({ ok: false, code: 'api_key_invalid' });
    const revoked = aKey('publishable', { revokedAt: NOW.toISOString() });
    expect(decideBrowserKey(revoked.presented, revoked.record, NOW, SHOP)).toMatchObject({ ok: false, code: 'api_key_invalid' });
    const expired = aKey('publishable', { expiresAt: '2026-11-23T11:00:00Z' });
    expect(decideBrowserKey(expired.presented, expired.record, NOW, SHOP)).toMatchObject({ ok: false, code: 'api_key_invalid' });
    expect(decideBrowserKey(presentedKeyOf(TEST_PEPPER, undefined), undefined, NOW, SHOP)).toEqual({ ok: false, code: 'api_key_missing' });
  });
});

import { TesseraError } from '@tessera/common';
import { type AuditRecord, RedisMerchantSettingsStore } from '@tessera/merchant-data';
import { useAdminRedis } from '../testing/redis';
import type { KeyCaller } from './apiKeys';
import { getReturnUrls, parseReturnUrls, setReturnUrls, showFormSigningSecret, type ReturnUrlDeps } from './returnUrls';

const db = useAdminRedis();
beforeEach(() => db.redis.flushall());

function deps(): ReturnUrlDeps & { entries: AuditRecord[]; merchantSettings: RedisMerchantSettingsStore } {
  const entries: AuditRecord[] = [];
  return {
    entries,
    merchantSettings: new RedisMerchantSettingsStore(db.redis),
    audit: { append: async (record: AuditRecord) => void entries.push(record) },
    pepper: 'p'.repeat(32),
    now: () => new Date('2026-11-23T12:00:00Z'),
  };
}

const operatorOf = (merchantId: string | null): KeyCaller => ({
  actor: { id: 'op_1', email: 'ops@shop.test' },
  ip: '203.0.113.9',
  merchantId,
});

describe('return URL use cases', () => {
  it('store the canonical list, keep the PSP hosts, and audit the change with the previous list', async () => {
    const d = deps();
    await d.merchantSettings.setPspHosts('shop', ['api.psp.test'], d.now());
    const urls = parseReturnUrls({ returnUrls: ['HTTPS://shop.test:443/done', 'https://shop.test/done'] });
    expect(urls).toEqual(['https://shop.test/done']);
    await setReturnUrls(d, operatorOf('shop'), 'shop', urls);
    expect(await getReturnUrls(d, operatorOf(null), 'shop')).toMatchObject({ returnUrls: ['https://shop.test/done'] });
    expect((await d.merchantSettings.get('shop'))?.pspHosts).toEqual(['api.psp.test']);
    expect(d.entries).toEqual([
      expect.objectContaining({
        action: 'merchant.return_urls_updated',
        merchantId: 'shop',
        details: { returnUrls: ['https://shop.test/done'], previousReturnUrls: [] },
      }),
    ]);
  });

  it('keep a merchant operator to its own merchant', async () => {
    const d = deps();
    await expect(setReturnUrls(d, operatorOf('other'), 'shop', [])).rejects.toMatchObject({ code: 'merchant_forbidden' });
    await expect(showFormSigningSecret(d, operatorOf('other'), 'shop', 'test')).rejects.toBeInstanceOf(TesseraError);
    expect(d.entries).toEqual([]);
  });

  it('name the bad entry in a refusal', () => {
    expect(() => parseReturnUrls({ returnUrls: ['https://shop.test/ok', 'https://shop.test/done?x=1'] })).toThrow(
      expect.objectContaining({ code: 'parameter_invalid', param: 'returnUrls[1]' }),
    );
  });
});

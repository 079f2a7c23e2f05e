import { MAX_BATCH_BODY_BYTES, MAX_MESSAGE_BYTES } from '@tessera/protos';
import { renderedSizeBound } from './vaultClient';

describe('renderedSizeBound (how the render batcher weighs a template)', () => {
  it('bounds the widest holder name the vault stores, form-encoded (256 × U+FFFF → %EF%BF%BF each)', () => {
    const template = 'name=[CARD_HOLDER]';
    const widest = encodeURIComponent('\uffff'.repeat(256));
    expect(renderedSizeBound(template)).toBeGreaterThanOrEqual(Buffer.byteLength(`name=${widest}`));
  });

  it('weighs an amplifying template past any batch, so it renders in a call of its own', () => {
    expect(renderedSizeBound('[CARD_HOLDER]'.repeat(75_000))).toBeGreaterThan(MAX_BATCH_BODY_BYTES);
  });

  it('keeps a batch of small templates that render near the 2 MiB cap under one gRPC message', () => {
    const nearCap = renderedSizeBound('[CARD_HOLDER]'.repeat(1_100));
    const perBatch = Math.max(1, Math.floor(MAX_BATCH_BODY_BYTES / nearCap));
    expect(perBatch * 2 * 1024 * 1024).toBeLessThan(MAX_MESSAGE_BYTES);
  });

  it('adds little to an ordinary template', () => {
    const template = JSON.stringify({ amount: 1000, card: { number: '[CARD_NUMBER]', cvc: '[CARD_CVV]', name: '[CARD_HOLDER]' } });
    expect(renderedSizeBound(template)).toBeLessThan(Buffer.byteLength(template) + 8 * 1024);
  });
});

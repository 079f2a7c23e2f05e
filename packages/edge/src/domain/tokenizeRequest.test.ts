import { validateCard } from '@tessera/common';
import { tokenizeRequestFor } from './tokenizeRequest';

describe('tokenizeRequestFor', () => {
  const owner = { merchantId: 'shop', mode: 'test' as const };

  it('sends the validated card for the key’s merchant and mode', () => {
    const card = validateCard({ number: '4242 4242 4242 4242', holderName: 'Ada', expiryMonth: 12, expiryYear: 2040, cvv: 46 }, 'test');
    expect(tokenizeRequestFor(card, owner, true)).toEqual({
      merchantId: 'shop',
      number: '4242424242424242',
      holderName: 'Ada',
      expiryMonth: 12,
      expiryYear: 2040,
      cvv: card.cvv,
      mode: 'test',
      provisional: true,
    });
  });

  it('sends a missing holder name and CVV as empty strings, and an ordinary token as not provisional', () => {
    const card = validateCard({ number: '4242424242424242', expiryMonth: 12, expiryYear: 2040 }, 'test');
    expect(tokenizeRequestFor(card, owner, false)).toMatchObject({ holderName: '', cvv: '', provisional: false });
  });
});

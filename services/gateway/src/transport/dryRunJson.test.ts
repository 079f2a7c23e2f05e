import { dryRunJson } from './responseJson';

describe('dry-run answer', () => {
  it('masks a card number the merchant typed into the template, URL or headers, keeping what the vault already masked', () => {
    const json = dryRunJson({
      method: 'POST',
      url: 'https://psp.example/charges?card=4242424242424242',
      headers: [{ name: 'x-note', value: 'card 5555 5555 5555 4444' }],
      hasBody: true,
      preview: {
        body: '{"literal":"378282246310005","filled":"424242******4242"}',
        filled: ['[CARD_NUMBER]'],
        unfillable: [],
        unknown: [],
      },
      destinationAllowed: true,
      destinationErrorCode: '',
      destinationErrorMessage: '',
    });
    expect(json.request).toEqual({
      method: 'POST',
      url: 'https://psp.example/charges?card=[redacted]',
      headers: { 'x-note': 'card [redacted]' },
      body: '{"literal":"[redacted]","filled":"424242******4242"}',
    });
  });
});

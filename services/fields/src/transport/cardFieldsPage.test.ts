import { cardInputsMarkup, pageOpening } from './cardFieldsPage';

describe('cardInputsMarkup', () => {
  it('renders English labels and placeholders by default, as before', () => {
    const html = cardInputsMarkup({ showName: true });
    expect(html).toContain('<label for="cc-number">Card number</label>');
    expect(html).toContain('placeholder="MM / YY"');
    // The name input has no placeholder in any language.
    expect(html).toMatch(/<input id="cc-name"(?![^>]*placeholder)[^>]*>/);
  });

  it('renders another locale’s labels and placeholders (the hosted page passes its own)', () => {
    const html = cardInputsMarkup({ showName: true }, 'de');
    expect(html).toContain('<label for="cc-number">Kartennummer</label>');
    expect(html).toContain('<label for="cc-exp">Ablaufdatum (MM / JJ)</label>');
    expect(html).toContain('placeholder="MM / JJ"');
    expect(cardInputsMarkup({ showName: false }, 'fr')).toContain('Date d’expiration (MM / AA)');
  });

  it('sets the page language', () => {
    expect(pageOpening('Paiement', '', 'fr')).toContain('<html lang="fr">');
    expect(pageOpening('Pay', '')).toContain('<html lang="en">');
  });
});

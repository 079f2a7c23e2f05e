import { FIELD_ERROR_CODES } from './protocol';
import { LOCALE_TEXTS, LOCALES, resolveLocale } from './locale';

describe('resolveLocale', () => {
  it('uses the merchant’s locale, English when none is set', () => {
    expect(resolveLocale('nl', ['de-DE'])).toBe('nl');
    expect(resolveLocale(undefined, ['de-DE'])).toBe('en');
  });

  it('auto: the first browser language we have, by its primary subtag, else English', () => {
    expect(resolveLocale('auto', ['de-AT', 'en-GB'])).toBe('de');
    expect(resolveLocale('auto', ['pt-BR', 'FR-ca'])).toBe('fr');
    expect(resolveLocale('auto', ['ja'])).toBe('en');
    expect(resolveLocale('auto', [])).toBe('en');
  });
});

describe('LOCALE_TEXTS', () => {
  it.each(LOCALES)('%s has every label, placeholder, message and error', (locale) => {
    const text = LOCALE_TEXTS[locale];
    for (const field of ['number', 'expiry', 'cvc', 'name'] as const) expect(text.labels[field].length).toBeGreaterThan(0);
    for (const field of ['number', 'expiry', 'cvc'] as const) expect(text.placeholders[field].length).toBeGreaterThan(0);
    for (const code of FIELD_ERROR_CODES) expect(text.errors[code]).toMatch(/\.$/);
    for (const message of [text.formTitle, text.frameTitle, text.standalone, text.tokenizeInProgress, text.networkError]) {
      expect(message.length).toBeGreaterThan(0);
    }
  });

  it('says each error differently in each language but English', () => {
    for (const locale of LOCALES.filter((l) => l !== 'en')) {
      for (const code of FIELD_ERROR_CODES) expect(LOCALE_TEXTS[locale].errors[code]).not.toBe(LOCALE_TEXTS.en.errors[code]);
    }
  });
});

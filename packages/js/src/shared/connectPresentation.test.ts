import { parseConnect } from './protocol';

const connect = (presentation: unknown): unknown => ({
  type: 'tessera:connect',
  v: 1,
  nonce: 'abcdefghijklmnopqrstuvwx',
  style: {},
  holderName: false,
  presentation,
});

describe('the handshake’s presentation, as the iframe re-checks it', () => {
  it('carries a checked theme, texts and locale', () => {
    const presentation = { appearance: { theme: 'night' }, locale: 'de', labels: { number: 'Karte' }, hideLabels: true };
    expect(parseConnect(connect(presentation))).toMatchObject({
      presentation: {
        appearance: { theme: 'night', variables: {}, rules: {} },
        locale: 'de',
        labels: { number: 'Karte' },
        hideLabels: true,
      },
    });
  });

  it.each([
    ['a theme whose labels fail contrast', { appearance: { variables: { colorBackground: '#000', colorText: '#222' } } }],
    ['a font from elsewhere', { appearance: { variables: { fontFamily: 'url(https://evil.example/f.woff2)' } } }],
    ['an unknown locale', { locale: 'xx' }],
    ['a label with control characters', { labels: { number: 'a\u0000b' } }],
  ])('drops a handshake with %s', (_name, presentation) => {
    expect(parseConnect(connect(presentation))).toBeUndefined();
  });

  it('is optional: an older tessera.js sends none', () => {
    const { presentation: _none, ...older } = connect(undefined) as Record<string, unknown>;
    expect(parseConnect(older)).not.toHaveProperty('presentation');
  });
});

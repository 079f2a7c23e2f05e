import { checkPresentation, presentationOptionsOf, resolveAppearance, THEMES, type Appearance } from './appearance';

const refusal = (input: unknown): string => {
  const result = checkPresentation(input);
  if (result.ok) throw new Error('expected a refusal');
  return `${result.code}: ${result.message}`;
};

describe('themes', () => {
  it.each(THEMES)('the %s theme passes its own contrast checks and keeps every colour', (theme) => {
    const result = resolveAppearance({ theme });
    expect(result.ok).toBe(true);
    expect(result.ok && result.resolved.keptDefault).toEqual([]);
  });

  it('night paints a dark background and light labels, inputs and errors', () => {
    const result = checkPresentation({ appearance: { theme: 'night' } });
    expect(result.ok && result.resolved?.properties).toMatchObject({
      '--tc-bg': '#1c1d26',
      '--tc-label': '#f2f3f7',
      '--tc-input-text': '#f2f3f7',
      '--tc-danger': '#ff8f9f',
    });
  });

  it('derives spacing from spacingUnit and merges theme rules under the merchant’s', () => {
    const result = resolveAppearance({ theme: 'flat', variables: { spacingUnit: '6px' }, rules: { '.Label': { fontSize: '13px' } } });
    expect(result.ok && result.resolved.properties['--tc-gap']).toBe('calc(6px * 2.5)');
    expect(result.ok && result.resolved.rules['.Label']).toEqual({
      'text-transform': 'uppercase',
      'letter-spacing': '0.04em',
      'font-size': '13px',
    });
  });
});

describe('contrast check', () => {
  it('refuses dark labels on a dark background, naming the pair and the ratio', () => {
    expect(refusal({ appearance: { variables: { colorBackground: '#1c1d26', colorText: '#333333' } } })).toBe(
      'invalid_appearance: appearance: the label text (variables.colorText #333333) on the background (#1c1d26) has a contrast of 1.32:1; WCAG AA needs at least 4.5:1',
    );
  });

  it.each<[string, Appearance, RegExp]>([
    ['a label rule', { rules: { '.Label': { color: '#aaaaaa' } } }, /the label text \(rules\['.Label'\].color #aaaaaa\) .* 2.32:1/],
    ['an error colour', { variables: { colorDanger: '#ff6b6b' } }, /the error text \(variables.colorDanger #ff6b6b\)/],
    ['an error rule', { rules: { '.Error': { color: 'hsl(0 100% 70%)' } } }, /the error text \(rules\['.Error'\].color/],
    [
      'input text on its own background',
      { rules: { '.Input': { backgroundColor: '#222', color: '#444' } } },
      /the input text .* on the input background \(#222\)/,
    ],
    ['a pale placeholder', { variables: { colorTextPlaceholder: '#bbbbbb' } }, /the placeholder/],
    ['text in a focus state', { rules: { '.Input:focus': { backgroundColor: '#000000' } } }, /the input text in .Input:focus/],
    [
      'a faint border on an input that blends in',
      { variables: { colorBorder: '#e6e6e6' } },
      /the input border .* WCAG AA needs at least 3:1/,
    ],
    ['a faint focus ring', { variables: { colorPrimary: '#c8d8ff' } }, /the focus ring/],
    ['translucent text that ends up too light', { variables: { colorText: 'rgba(0, 0, 0, 0.3)' } }, /the label text/],
  ])('refuses %s', (_name, appearance, message) => {
    expect(refusal({ appearance })).toMatch(message);
  });

  it('lets a faint border pass when the input’s own background marks its boundary', () => {
    const result = checkPresentation({
      appearance: {
        variables: {
          colorBorder: '#e6e6e6',
          colorInputBackground: '#5a5a5a',
          colorTextPlaceholder: '#eeeeee',
          colorTextSecondary: '#ffffff',
        },
        rules: { '.Input': { color: '#ffffff' } },
      },
    });
    expect(result.ok).toBe(true);
  });

  it('accepts a colour it cannot evaluate but keeps the theme’s colour for that pair', () => {
    const result = resolveAppearance({ variables: { colorText: 'color-mix(in srgb, black 80%, blue)' } });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.resolved.properties['--tc-label']).toBe('#1a1a1a');
    expect(result.resolved.properties['--tc-input-text']).toBe('#1a1a1a');
    expect(result.resolved.keptDefault).toEqual([
      'the label text (variables.colorText color-mix(in srgb, black 80%, blue))',
      'the input text (variables.colorText color-mix(in srgb, black 80%, blue))',
    ]);
  });

  it('falls back to white when the theme’s colour would fail on the merchant’s dark background', () => {
    const result = resolveAppearance({
      variables: {
        colorBackground: '#101010',
        colorInputBackground: '#101010',
        colorText: 'oklch(90% 0 0)',
        colorTextPlaceholder: '#aaaaaa',
        colorTextSecondary: '#aaaaaa',
        colorDanger: '#ff8f9f',
        colorPrimary: '#85a9ff',
        colorBorder: '#888888',
      },
    });
    expect(result.ok && result.resolved.properties['--tc-label']).toBe('#ffffff');
  });

  it('keeps the theme’s background when the merchant’s cannot be evaluated or is translucent', () => {
    for (const colorBackground of ['color-mix(in srgb, white, black)', 'rgba(0, 0, 0, 0.5)']) {
      const result = resolveAppearance({ variables: { colorBackground } });
      expect(result.ok && result.resolved.properties['--tc-bg']).toBe('#ffffff');
    }
  });

  it('drops a state background it cannot evaluate, and checks that state’s text on the input background instead', () => {
    const result = resolveAppearance({
      rules: { '.Input:focus': { backgroundColor: 'color-mix(in srgb, white, blue 5%)', color: '#222222' } },
    });
    expect(result.ok && result.resolved.rules['.Input:focus']).toEqual({ color: '#222222' });
    expect(result.ok && result.resolved.keptDefault).toEqual([
      "rules['.Input:focus'].backgroundColor (color-mix(in srgb, white, blue 5%))",
    ]);
  });

  it('names the theme’s input background in a refusal once the merchant’s could not be evaluated', () => {
    const result = resolveAppearance({ variables: { colorInputBackground: 'oklch(20% 0 0)', colorTextPlaceholder: '#eeeeee' } });
    expect(result.ok ? '' : result.message).toMatch(
      /the placeholder \(variables.colorTextPlaceholder #eeeeee\) on the input background \(#ffffff\)/,
    );
  });

  it('writes a kept default into the rule that set the colour', () => {
    const result = resolveAppearance({ rules: { '.Error': { color: 'lab(40% 60 40)' } } });
    expect(result.ok && result.resolved.rules['.Error']).toEqual({ color: '#b00020' });
  });
});

describe('shape and values', () => {
  it.each<[string, unknown, RegExp]>([
    ['an unknown theme', { appearance: { theme: 'neon' } }, /appearance.theme must be one of default, night, flat/],
    ['an unknown variable', { appearance: { variables: { colorLink: '#000' } } }, /colorLink is not a variable/],
    ['url() in a variable', { appearance: { variables: { colorBackground: 'url(https://evil.example/x)' } } }, /plain CSS value/],
    ['var() in a rule', { appearance: { rules: { '.Input': { color: 'var(--x)' } } } }, /not var\(\)/],
    ['an unknown rule', { appearance: { rules: { '.Tab': { color: '#000' } } } }, /\['.Tab'\] is not a rule/],
    [
      'a box property on a label',
      { appearance: { rules: { '.Label': { backgroundColor: '#000' } } } },
      /backgroundColor is not a property .Label accepts/,
    ],
    ['a length that is not one', { appearance: { variables: { spacingUnit: 'red' } } }, /must be a length/],
    [
      'a font the fields do not serve',
      { appearance: { variables: { fontFamily: 'Poppins, sans-serif' } } },
      /"Poppins" is neither a font the fields serve \(Inter, Lora\)/,
    ],
    ['a font in a rule', { appearance: { rules: { '.Label': { fontFamily: 'Comic Sans' } } } }, /"Comic Sans"/],
    ['an unknown option', { colors: {} }, /colors is not a presentation option/],
    ['a label that is empty', { labels: { number: '  ' } }, /labels.number must not be empty/],
    ['a label too long', { labels: { cvc: 'x'.repeat(81) } }, /at most 80 characters/],
    ['a placeholder with a direction override', { placeholders: { number: '\u202e4242' } }, /plain text/],
    ['a label for an unknown field', { labels: { zip: 'ZIP' } }, /labels.zip is not a field/],
    ['hideLabels that is not a boolean', { hideLabels: 'yes' }, /hideLabels must be true or false/],
  ])('refuses %s', (_name, input, message) => {
    expect(refusal(input)).toMatch(message);
  });

  it('refuses an unknown locale with its own code', () => {
    expect(refusal({ locale: 'pt' })).toBe('invalid_locale: locale must be one of auto, en, de, fr, es, nl (not pt)');
  });

  it('accepts served fonts and system stacks, quoted or not', () => {
    for (const fontFamily of ['Inter', '"Inter", system-ui, sans-serif', "'Lora', Georgia, serif", 'system-ui']) {
      expect(checkPresentation({ appearance: { variables: { fontFamily } } }).ok).toBe(true);
    }
  });

  it('passes text, locale and hideLabels through unchanged', () => {
    const input = { locale: 'auto', labels: { number: 'Kaart', name: '<b>Name</b>' }, placeholders: { cvc: '' }, hideLabels: true };
    expect(checkPresentation(input)).toEqual({ ok: true, presentation: input });
  });

  it('picks only the presentation options out of cardFields’ options', () => {
    expect(presentationOptionsOf({ locale: 'de', appearance: undefined, hideLabels: false, container: '#card' } as never)).toEqual({
      locale: 'de',
      hideLabels: false,
    });
  });
});

import { checkFieldsStyle, styleFor } from './style';

describe('checkFieldsStyle', () => {
  it('accepts whitelisted properties per state', () => {
    const style = {
      base: { color: '#32325d', fontSize: '16px', fontFamily: '"Inter", system-ui, sans-serif' },
      invalid: { color: 'rgb(200, 0, 0)' },
    };
    expect(checkFieldsStyle(style)).toEqual({ ok: true, style });
  });

  it.each([
    ['url(', { base: { backgroundColor: 'url(https://evil.example/p.png)' } }, /plain CSS value/],
    ['URL with spaces and case', { focus: { color: 'URL  (x)' } }, /plain CSS value/],
    ['an escaped url', { base: { color: 'u\\72l(x)' } }, /plain CSS value/],
    ['a second declaration', { base: { color: 'red; background: blue' } }, /plain CSS value/],
    ['an at-rule', { base: { fontFamily: '@import x' } }, /plain CSS value/],
    ['a property off the list', { base: { position: 'absolute' } }, /not a property the card fields accept/],
    ['an unknown state', { hover: { color: 'red' } }, /not a state/],
    ['a non-string value', { base: { color: 12 } }, /must be a string/],
    ['a custom property', { base: { color: 'var(--brand)' } }, /may call only .*; not var\(\)/],
    ['an attribute read', { base: { fontFamily: 'attr(data-x)' } }, /not attr\(\)/],
    ['an attribute read in upper case', { base: { color: 'ATTR(data-x)' } }, /not ATTR\(\)/],
    ['a function nested in an allowed one', { base: { padding: 'calc(var(--x) + 2px)' } }, /not var\(\)/],
    ['a function with a space before its parenthesis', { base: { color: 'var (--x)' } }, /not var\(\)/],
    ['a user-agent variable', { base: { padding: 'env(safe-area-inset-top)' } }, /not env\(\)/],
    ['a counter', { base: { fontFamily: 'counter(x)' } }, /not counter\(\)/],
  ])('refuses %s', (_name, style, message) => {
    const result = checkFieldsStyle(style);
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.message).toMatch(message);
  });
});

describe('checkFieldsStyle functions', () => {
  it.each([
    ['color', 'rgba(0, 0, 0, 0.5)'],
    ['backgroundColor', 'HSL(210 40% 96%)'],
    ['color', 'oklch(70% 0.1 200)'],
    ['color', 'color-mix(in srgb, red 40%, blue)'],
    ['padding', 'calc((1rem + 2px) * 2) max(4px, 1vh)'],
    ['fontSize', 'clamp(14px, 2vw, 18px)'],
  ])('accepts %s: %s', (property, value) => {
    expect(checkFieldsStyle({ base: { [property]: value } }).ok).toBe(true);
  });
});

describe('styleFor', () => {
  it('layers complete, focus and invalid over base', () => {
    const style = { base: { color: 'black', fontSize: '16px' }, focus: { color: 'blue' }, invalid: { color: 'red' } };
    expect(styleFor(style, { focus: true, invalid: false, complete: false })).toEqual({ color: 'blue', fontSize: '16px' });
    expect(styleFor(style, { focus: true, invalid: true, complete: false })).toEqual({ color: 'red', fontSize: '16px' });
  });
});

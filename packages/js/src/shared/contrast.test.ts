import { composite, contrastRatio, formatRatio, parseColor, relativeLuminance } from './contrast';

const ratio = (a: string, b: string): number => contrastRatio(parseColor(a)!, parseColor(b)!);

describe('parseColor', () => {
  it.each([
    ['#fff', { r: 255, g: 255, b: 255, a: 1 }],
    ['#000000', { r: 0, g: 0, b: 0, a: 1 }],
    ['#1A1B25', { r: 26, g: 27, b: 37, a: 1 }],
    ['#ff000080', { r: 255, g: 0, b: 0, a: 128 / 255 }],
    ['#f008', { r: 255, g: 0, b: 0, a: 136 / 255 }],
    ['rgb(118, 118, 118)', { r: 118, g: 118, b: 118, a: 1 }],
    ['rgba(0,0,0,0.5)', { r: 0, g: 0, b: 0, a: 0.5 }],
    ['rgb(0 128 255 / 50%)', { r: 0, g: 128, b: 255, a: 0.5 }],
    ['rgb(100% 0% 0%)', { r: 255, g: 0, b: 0, a: 1 }],
    ['RebeccaPurple', { r: 102, g: 51, b: 153, a: 1 }],
    ['aliceblue', { r: 240, g: 248, b: 255, a: 1 }],
    ['yellowgreen', { r: 154, g: 205, b: 50, a: 1 }],
    ['darkslategrey', { r: 47, g: 79, b: 79, a: 1 }],
    ['transparent', { r: 0, g: 0, b: 0, a: 0 }],
  ])('reads %s', (value, expected) => {
    expect(parseColor(value)).toEqual(expected);
  });

  it.each([
    ['hsl(0, 100%, 50%)', [255, 0, 0]],
    ['hsl(120deg 100% 25%)', [0, 127.5, 0]],
    ['hsla(240, 100%, 50%, 0.3)', [0, 0, 255]],
    ['hsl(0.5turn 100% 50%)', [0, 255, 255]],
    ['hsl(0 0% 46.27%)', [118, 118, 118]],
  ])('reads %s as sRGB', (value, [r, g, b]) => {
    const color = parseColor(value)!;
    expect(color.r).toBeCloseTo(r!, 0);
    expect(color.g).toBeCloseTo(g!, 0);
    expect(color.b).toBeCloseTo(b!, 0);
  });

  it.each([
    'color-mix(in srgb, red 40%, blue)',
    'oklch(70% 0.1 200)',
    'currentColor',
    'var(--x)',
    '#12',
    'rgb(1, 2)',
    'calc(1px)',
    'hsl(x 1% 1%)',
  ])('cannot evaluate %s', (value) => {
    expect(parseColor(value)).toBeUndefined();
  });
});

describe('contrast ratio (WCAG 2.2)', () => {
  it('is 21:1 for black on white, 1:1 for a colour on itself, the same both ways', () => {
    expect(ratio('#000', '#fff')).toBeCloseTo(21, 5);
    expect(ratio('#777', '#777')).toBe(1);
    expect(ratio('#fff', '#000')).toBeCloseTo(21, 5);
  });

  it.each([
    // Known pairs (WebAIM's contrast checker): #767676 is the lightest grey that passes AA on white.
    ['#767676', '#ffffff', 4.54],
    ['#777777', '#ffffff', 4.47],
    ['#ff0000', '#ffffff', 3.99],
    ['#0000ff', '#ffffff', 8.59],
    ['#333333', '#1c1d26', 1.32],
    ['#b00020', '#ffffff', 7.32],
  ])('%s on %s is %s:1 (to two decimals, rounded down)', (fg, bg, expected) => {
    expect(Math.floor(ratio(fg, bg) * 100) / 100).toBe(expected);
  });

  it('composites a translucent foreground over the background first', () => {
    // Half-transparent black on white is mid grey (127.5).
    expect(composite(parseColor('rgba(0,0,0,0.5)')!, parseColor('#fff')!)).toEqual({ r: 127.5, g: 127.5, b: 127.5, a: 1 });
    expect(ratio('rgba(0,0,0,0.5)', '#fff')).toBeCloseTo(ratio('rgb(127.5,127.5,127.5)', '#fff'), 5);
  });

  it('computes relative luminance from linear sRGB', () => {
    expect(relativeLuminance({ r: 255, g: 255, b: 255 })).toBeCloseTo(1, 10);
    expect(relativeLuminance({ r: 0, g: 0, b: 0 })).toBe(0);
    expect(relativeLuminance({ r: 255, g: 0, b: 0 })).toBeCloseTo(0.2126, 10);
  });

  it('formats a ratio rounded down, so 4.499 never reads as passing', () => {
    expect(formatRatio(4.4999)).toBe('4.49:1');
    expect(formatRatio(21)).toBe('21:1');
    expect(formatRatio(4.5)).toBe('4.5:1');
    expect(formatRatio(10)).toBe('10:1');
    expect(formatRatio(1.339)).toBe('1.33:1');
  });
});

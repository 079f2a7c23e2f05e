/**
 * Colour contrast as WCAG 2.2 defines it (1.4.3 text, 1.4.11 non-text): relative luminance of
 * sRGB colours and the ratio between two of them. Used by the appearance check (appearance.ts) in
 * tessera.js, which refuses a theme whose text fails, and in the iframe, which checks again.
 *
 * Only colours whose value is known without a browser are evaluated: hex, rgb()/rgba(),
 * hsl()/hsla() and the CSS named colours. Others (color-mix(), oklch(), lab(), currentColor, …)
 * parse as undefined; the caller decides what an unknown colour means (appearance.ts keeps the
 * theme's own colour for that pair).
 */

/** Channels 0-255, alpha 0-1. */
export interface Rgba {
  r: number;
  g: number;
  b: number;
  a: number;
}

/** WCAG AA: normal text (1.4.3), and user-interface components such as an input's border or a focus ring (1.4.11). */
export const TEXT_CONTRAST = 4.5;
export const NON_TEXT_CONTRAST = 3;

/** CSS Color 4 named colours (lower case), as 0xRRGGBB. */
const NAMED_COLORS: Record<string, number> = {
  aliceblue: 0xf0f8ff,
  antiquewhite: 0xfaebd7,
  aqua: 0x00ffff,
  aquamarine: 0x7fffd4,
  azure: 0xf0ffff,
  beige: 0xf5f5dc,
  bisque: 0xffe4c4,
  black: 0x000000,
  blanchedalmond: 0xffebcd,
  blue: 0x0000ff,
  blueviolet: 0x8a2be2,
  brown: 0xa52a2a,
  burlywood: 0xdeb887,
  cadetblue: 0x5f9ea0,
  chartreuse: 0x7fff00,
  chocolate: 0xd2691e,
  coral: 0xff7f50,
  cornflowerblue: 0x6495ed,
  cornsilk: 0xfff8dc,
  crimson: 0xdc143c,
  cyan: 0x00ffff,
  darkblue: 0x00008b,
  darkcyan: 0x008b8b,
  darkgoldenrod: 0xb8860b,
  darkgray: 0xa9a9a9,
  darkgreen: 0x006400,
  darkgrey: 0xa9a9a9,
  darkkhaki: 0xbdb76b,
  darkmagenta: 0x8b008b,
  darkolivegreen: 0x556b2f,
  darkorange: 0xff8c00,
  darkorchid: 0x9932cc,
  darkred: 0x8b0000,
  darksalmon: 0xe9967a,
  darkseagreen: 0x8fbc8f,
  darkslateblue: 0x483d8b,
  darkslategray: 0x2f4f4f,
  darkslategrey: 0x2f4f4f,
  darkturquoise: 0x00ced1,
  darkviolet: 0x9400d3,
  deeppink: 0xff1493,
  deepskyblue: 0x00bfff,
  dimgray: 0x696969,
  dimgrey: 0x696969,
  dodgerblue: 0x1e90ff,
  firebrick: 0xb22222,
  floralwhite: 0xfffaf0,
  forestgreen: 0x228b22,
  fuchsia: 0xff00ff,
  gainsboro: 0xdcdcdc,
  ghostwhite: 0xf8f8ff,
  gold: 0xffd700,
  goldenrod: 0xdaa520,
  gray: 0x808080,
  green: 0x008000,
  greenyellow: 0xadff2f,
  grey: 0x808080,
  honeydew: 0xf0fff0,
  hotpink: 0xff69b4,
  indianred: 0xcd5c5c,
  indigo: 0x4b0082,
  ivory: 0xfffff0,
  khaki: 0xf0e68c,
  lavender: 0xe6e6fa,
  lavenderblush: 0xfff0f5,
  lawngreen: 0x7cfc00,
  lemonchiffon: 0xfffacd,
  lightblue: 0xadd8e6,
  lightcoral: 0xf08080,
  lightcyan: 0xe0ffff,
  lightgoldenrodyellow: 0xfafad2,
  lightgray: 0xd3d3d3,
  lightgreen: 0x90ee90,
  lightgrey: 0xd3d3d3,
  lightpink: 0xffb6c1,
  lightsalmon: 0xffa07a,
  lightseagreen: 0x20b2aa,
  lightskyblue: 0x87cefa,
  lightslategray: 0x778899,
  lightslategrey: 0x778899,
  lightsteelblue: 0xb0c4de,
  lightyellow: 0xffffe0,
  lime: 0x00ff00,
  limegreen: 0x32cd32,
  linen: 0xfaf0e6,
  magenta: 0xff00ff,
  maroon: 0x800000,
  mediumaquamarine: 0x66cdaa,
  mediumblue: 0x0000cd,
  mediumorchid: 0xba55d3,
  mediumpurple: 0x9370db,
  mediumseagreen: 0x3cb371,
  mediumslateblue: 0x7b68ee,
  mediumspringgreen: 0x00fa9a,
  mediumturquoise: 0x48d1cc,
  mediumvioletred: 0xc71585,
  midnightblue: 0x191970,
  mintcream: 0xf5fffa,
  mistyrose: 0xffe4e1,
  moccasin: 0xffe4b5,
  navajowhite: 0xffdead,
  navy: 0x000080,
  oldlace: 0xfdf5e6,
  olive: 0x808000,
  olivedrab: 0x6b8e23,
  orange: 0xffa500,
  orangered: 0xff4500,
  orchid: 0xda70d6,
  palegoldenrod: 0xeee8aa,
  palegreen: 0x98fb98,
  paleturquoise: 0xafeeee,
  palevioletred: 0xdb7093,
  papayawhip: 0xffefd5,
  peachpuff: 0xffdab9,
  peru: 0xcd853f,
  pink: 0xffc0cb,
  plum: 0xdda0dd,
  powderblue: 0xb0e0e6,
  purple: 0x800080,
  rebeccapurple: 0x663399,
  red: 0xff0000,
  rosybrown: 0xbc8f8f,
  royalblue: 0x4169e1,
  saddlebrown: 0x8b4513,
  salmon: 0xfa8072,
  sandybrown: 0xf4a460,
  seagreen: 0x2e8b57,
  seashell: 0xfff5ee,
  sienna: 0xa0522d,
  silver: 0xc0c0c0,
  skyblue: 0x87ceeb,
  slateblue: 0x6a5acd,
  slategray: 0x708090,
  slategrey: 0x708090,
  snow: 0xfffafa,
  springgreen: 0x00ff7f,
  steelblue: 0x4682b4,
  tan: 0xd2b48c,
  teal: 0x008080,
  thistle: 0xd8bfd8,
  tomato: 0xff6347,
  turquoise: 0x40e0d0,
  violet: 0xee82ee,
  wheat: 0xf5deb3,
  white: 0xffffff,
  whitesmoke: 0xf5f5f5,
  yellow: 0xffff00,
  yellowgreen: 0x9acd32,
};

const clamp = (value: number, min: number, max: number): number => Math.min(max, Math.max(min, value));

/** `50%` of `scale`, or a plain number; undefined for anything else (calc(), none, …). */
function numberOf(token: string, percentOf: number): number | undefined {
  const match = /^([+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)(%?)$/i.exec(token);
  if (match === null) return undefined;
  const value = Number(match[1]);
  return match[2] === '%' ? (value / 100) * percentOf : value;
}

/** A hue in degrees: `120`, `120deg`, `0.5turn`, `3.14rad`, `200grad`. */
function hueOf(token: string): number | undefined {
  const match = /^([+-]?(?:\d+\.?\d*|\.\d+))(deg|turn|rad|grad)?$/i.exec(token);
  if (match === null) return undefined;
  const value = Number(match[1]);
  const unit = (match[2] ?? 'deg').toLowerCase();
  const degrees = unit === 'turn' ? value * 360 : unit === 'rad' ? (value * 180) / Math.PI : unit === 'grad' ? value * 0.9 : value;
  return ((degrees % 360) + 360) % 360;
}

/**
 * The arguments of `name(...)`, in either syntax: legacy commas (`rgb(1, 2, 3)`, `rgba(1,2,3,.5)`)
 * or modern spaces with an optional `/ alpha` (`rgb(1 2 3 / 50%)`). Undefined if nested or malformed.
 */
function argumentsOf(value: string, names: readonly string[]): { channels: string[]; alpha?: string } | undefined {
  const match = /^([a-z]+)\(([^()]*)\)$/i.exec(value);
  if (match === null || !names.includes((match[1] ?? '').toLowerCase())) return undefined;
  const inner = (match[2] ?? '').trim();
  if (inner.includes(',')) {
    const parts = inner.split(',').map((p) => p.trim());
    if (parts.length !== 3 && parts.length !== 4) return undefined;
    return parts.length === 4 ? { channels: parts.slice(0, 3), alpha: parts[3] } : { channels: parts };
  }
  const [main, alpha, ...rest] = inner.split('/').map((p) => p.trim());
  if (rest.length > 0 || main === undefined) return undefined;
  const channels = main.split(/\s+/).filter(Boolean);
  if (channels.length !== 3) return undefined;
  return alpha === undefined ? { channels } : { channels, alpha };
}

function alphaOf(token: string | undefined): number | undefined {
  if (token === undefined) return 1;
  const alpha = numberOf(token, 1);
  return alpha === undefined ? undefined : clamp(alpha, 0, 1);
}

function parseHex(hex: string): Rgba | undefined {
  if (!/^[0-9a-f]+$/i.test(hex) || ![3, 4, 6, 8].includes(hex.length)) return undefined;
  const full = hex.length <= 4 ? [...hex].map((c) => c + c).join('') : hex;
  const channel = (i: number): number => parseInt(full.slice(i * 2, i * 2 + 2), 16);
  return { r: channel(0), g: channel(1), b: channel(2), a: full.length === 8 ? channel(3) / 255 : 1 };
}

/** HSL to sRGB (CSS Color 4, section 7.1). */
function hslToRgb(hue: number, saturation: number, lightness: number): { r: number; g: number; b: number } {
  const s = clamp(saturation, 0, 1);
  const l = clamp(lightness, 0, 1);
  const f = (n: number): number => {
    const k = (n + hue / 30) % 12;
    return l - s * Math.min(l, 1 - l) * Math.max(-1, Math.min(k - 3, 9 - k, 1));
  };
  return { r: f(0) * 255, g: f(8) * 255, b: f(4) * 255 };
}

/** The colour a CSS value names, if it can be known here; undefined for anything else. */
export function parseColor(input: string): Rgba | undefined {
  const value = input.trim().toLowerCase();
  if (value === 'transparent') return { r: 0, g: 0, b: 0, a: 0 };
  const named = NAMED_COLORS[value];
  if (named !== undefined) return { r: (named >> 16) & 255, g: (named >> 8) & 255, b: named & 255, a: 1 };
  if (value.startsWith('#')) return parseHex(value.slice(1));
  const rgb = argumentsOf(value, ['rgb', 'rgba']);
  if (rgb !== undefined) {
    const [r, g, b] = rgb.channels.map((c) => numberOf(c, 255));
    const a = alphaOf(rgb.alpha);
    if (r === undefined || g === undefined || b === undefined || a === undefined) return undefined;
    return { r: clamp(r, 0, 255), g: clamp(g, 0, 255), b: clamp(b, 0, 255), a };
  }
  const hsl = argumentsOf(value, ['hsl', 'hsla']);
  if (hsl !== undefined) {
    const [hueToken, sToken, lToken] = hsl.channels as [string, string, string];
    const hue = hueOf(hueToken);
    // Saturation and lightness: percentages (CSS Color 4 also allows bare numbers as percent).
    const s = numberOf(sToken.endsWith('%') ? sToken : `${sToken}%`, 1);
    const l = numberOf(lToken.endsWith('%') ? lToken : `${lToken}%`, 1);
    const a = alphaOf(hsl.alpha);
    if (hue === undefined || s === undefined || l === undefined || a === undefined) return undefined;
    return { ...hslToRgb(hue, s, l), a };
  }
  return undefined;
}

/** `front` drawn over an opaque `back` (source-over compositing): what the eye sees. */
export function composite(front: Rgba, back: Rgba): Rgba {
  const mix = (f: number, b: number): number => f * front.a + b * (1 - front.a);
  return { r: mix(front.r, back.r), g: mix(front.g, back.g), b: mix(front.b, back.b), a: 1 };
}

/** WCAG 2.2's relative luminance of an sRGB colour (alpha ignored: composite first). */
export function relativeLuminance(color: Pick<Rgba, 'r' | 'g' | 'b'>): number {
  const linear = (channel: number): number => {
    const c = channel / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * linear(color.r) + 0.7152 * linear(color.g) + 0.0722 * linear(color.b);
}

/** The contrast ratio of two colours, 1 to 21; a translucent foreground is composited over the background first. */
export function contrastRatio(foreground: Rgba, background: Rgba): number {
  const front = foreground.a < 1 ? composite(foreground, background) : foreground;
  const a = relativeLuminance(front);
  const b = relativeLuminance(background);
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}

/** `4.47:1`: rounded down, so a ratio shown as 4.5:1 really passes 4.5:1. */
export function formatRatio(ratio: number): string {
  return `${(Math.floor(ratio * 100) / 100).toFixed(2).replace(/\.?0+$/, '')}:1`;
}

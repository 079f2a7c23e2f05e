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

/**
 * CSS Color 4 named colours (lower case) as `name:rrggbb`, space-separated: one string rather than
 * an object literal keeps tessera.js and the fields' script small.
 */
const NAMED_COLOR_LIST =
  'aliceblue:f0f8ff antiquewhite:faebd7 aqua:00ffff aquamarine:7fffd4 azure:f0ffff beige:f5f5dc ' +
  'bisque:ffe4c4 black:000000 blanchedalmond:ffebcd blue:0000ff blueviolet:8a2be2 brown:a52a2a ' +
  'burlywood:deb887 cadetblue:5f9ea0 chartreuse:7fff00 chocolate:d2691e coral:ff7f50 cornflowerblue:6495ed ' +
  'cornsilk:fff8dc crimson:dc143c cyan:00ffff darkblue:00008b darkcyan:008b8b darkgoldenrod:b8860b ' +
  'darkgray:a9a9a9 darkgreen:006400 darkgrey:a9a9a9 darkkhaki:bdb76b darkmagenta:8b008b ' +
  'darkolivegreen:556b2f darkorange:ff8c00 darkorchid:9932cc darkred:8b0000 darksalmon:e9967a ' +
  'darkseagreen:8fbc8f darkslateblue:483d8b darkslategray:2f4f4f darkslategrey:2f4f4f darkturquoise:00ced1 ' +
  'darkviolet:9400d3 deeppink:ff1493 deepskyblue:00bfff dimgray:696969 dimgrey:696969 dodgerblue:1e90ff ' +
  'firebrick:b22222 floralwhite:fffaf0 forestgreen:228b22 fuchsia:ff00ff gainsboro:dcdcdc ghostwhite:f8f8ff ' +
  'gold:ffd700 goldenrod:daa520 gray:808080 green:008000 greenyellow:adff2f grey:808080 honeydew:f0fff0 ' +
  'hotpink:ff69b4 indianred:cd5c5c indigo:4b0082 ivory:fffff0 khaki:f0e68c lavender:e6e6fa ' +
  'lavenderblush:fff0f5 lawngreen:7cfc00 lemonchiffon:fffacd lightblue:add8e6 lightcoral:f08080 ' +
  'lightcyan:e0ffff lightgoldenrodyellow:fafad2 lightgray:d3d3d3 lightgreen:90ee90 lightgrey:d3d3d3 ' +
  'lightpink:ffb6c1 lightsalmon:ffa07a lightseagreen:20b2aa lightskyblue:87cefa lightslategray:778899 ' +
  'lightslategrey:778899 lightsteelblue:b0c4de lightyellow:ffffe0 lime:00ff00 limegreen:32cd32 linen:faf0e6 ' +
  'magenta:ff00ff maroon:800000 mediumaquamarine:66cdaa mediumblue:0000cd mediumorchid:ba55d3 ' +
  'mediumpurple:9370db mediumseagreen:3cb371 mediumslateblue:7b68ee mediumspringgreen:00fa9a ' +
  'mediumturquoise:48d1cc mediumvioletred:c71585 midnightblue:191970 mintcream:f5fffa mistyrose:ffe4e1 ' +
  'moccasin:ffe4b5 navajowhite:ffdead navy:000080 oldlace:fdf5e6 olive:808000 olivedrab:6b8e23 ' +
  'orange:ffa500 orangered:ff4500 orchid:da70d6 palegoldenrod:eee8aa palegreen:98fb98 paleturquoise:afeeee ' +
  'palevioletred:db7093 papayawhip:ffefd5 peachpuff:ffdab9 peru:cd853f pink:ffc0cb plum:dda0dd ' +
  'powderblue:b0e0e6 purple:800080 rebeccapurple:663399 red:ff0000 rosybrown:bc8f8f royalblue:4169e1 ' +
  'saddlebrown:8b4513 salmon:fa8072 sandybrown:f4a460 seagreen:2e8b57 seashell:fff5ee sienna:a0522d ' +
  'silver:c0c0c0 skyblue:87ceeb slateblue:6a5acd slategray:708090 slategrey:708090 snow:fffafa ' +
  'springgreen:00ff7f steelblue:4682b4 tan:d2b48c teal:008080 thistle:d8bfd8 tomato:ff6347 turquoise:40e0d0 ' +
  'violet:ee82ee wheat:f5deb3 white:ffffff whitesmoke:f5f5f5 yellow:ffff00 yellowgreen:9acd32';

let namedColors: Map<string, number> | undefined;

function namedColor(name: string): number | undefined {
  namedColors ??= new Map(
    NAMED_COLOR_LIST.split(' ').map((entry) => {
      const [colorName, hex] = entry.split(':') as [string, string];
      return [colorName, parseInt(hex, 16)];
    }),
  );
  return namedColors.get(name);
}

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
  const named = namedColor(value);
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

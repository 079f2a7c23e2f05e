/**
 * Fields without an `appearance` keep their built-in look: a transparent background, dark labels and
 * red errors, made for light pages. On a dark page those fail WCAG AA (about 1.3:1 for the labels)
 * and nothing else would tell the merchant, so tessera.js measures the container's background once,
 * at mount, and says in the console what to pass instead. It changes nothing on the page.
 */
import { composite, contrastRatio, formatRatio, parseColor, TEXT_CONTRAST, type Rgba } from '../shared/contrast';

/** The built-in colours that sit on the merchant's page (the inputs have their own white background). */
const BUILT_IN_ON_PAGE = [
  ['labels', '#333333'],
  ['error messages', '#b00020'],
] as const;

const WHITE: Rgba = { r: 255, g: 255, b: 255, a: 1 };

/**
 * The background an element is drawn on: its own and its ancestors' background colours, composited
 * down to the first opaque one (the canvas, white, below all). A colour the browser reports in a
 * form we cannot read (a gradient is an image, not a colour) counts as transparent.
 */
export function backgroundBehind(layers: readonly string[]): Rgba {
  const colors = layers.map((value) => parseColor(value)).filter((c): c is Rgba => c !== undefined && c.a > 0);
  const opaque = colors.findIndex((c) => c.a >= 1);
  const stack = opaque === -1 ? colors : colors.slice(0, opaque + 1);
  let result = opaque === -1 ? WHITE : (stack[stack.length - 1] as Rgba);
  for (const layer of stack.slice(0, opaque === -1 ? stack.length : stack.length - 1).reverse()) result = composite(layer, result);
  return result;
}

/** What fails on this background with the built-in look, as the console says it; undefined when all is readable. */
export function builtInLookProblem(background: Rgba): string | undefined {
  const failing = BUILT_IN_ON_PAGE.map(([what, color]) => ({
    what,
    color,
    ratio: contrastRatio(parseColor(color) as Rgba, background),
  })).filter((pair) => pair.ratio < TEXT_CONTRAST);
  if (failing.length === 0) return undefined;
  const rgb = `rgb(${Math.round(background.r)}, ${Math.round(background.g)}, ${Math.round(background.b)})`;
  const pairs = failing.map((p) => `${p.what} (${p.color}) ${formatRatio(p.ratio)}`).join(', ');
  return (
    `Tessera: on this page's background (${rgb}) the card fields' built-in ${pairs} fail WCAG AA (${formatRatio(TEXT_CONTRAST)}). ` +
    `Pass appearance: { theme: 'night' } or your own colours (docs/browser.md, "Appearance and locales").`
  );
}

/** Warns in the console when the fields' built-in look would be unreadable in `container`. */
export function warnIfUnreadable(container: Element): void {
  const layers: string[] = [];
  for (let element: Element | null = container; element !== null; element = element.parentElement) {
    layers.push(getComputedStyle(element).backgroundColor);
  }
  const problem = builtInLookProblem(backgroundBehind(layers));
  if (problem !== undefined) console.warn(problem);
}

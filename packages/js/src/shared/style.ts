/**
 * What a merchant may style inside the card fields. The iframe is ours: a merchant's CSS could
 * otherwise load resources (`url(`), hide fields, or overlay a fake input. So only typographic and
 * box properties are accepted, per state, and values are plain CSS values. Both tessera.js (to
 * fail fast, on the merchant's page) and the iframe (which never trusts the page) run this check.
 */
export const STYLE_STATES = ['base', 'focus', 'invalid', 'complete'] as const;
export type StyleState = (typeof STYLE_STATES)[number];

/** camelCase names, as in CSSStyleDeclaration; mapped to CSS names by cssPropertyName. */
export const STYLE_PROPERTIES = [
  'color',
  'backgroundColor',
  'caretColor',
  'fontFamily',
  'fontSize',
  'fontStyle',
  'fontWeight',
  'fontVariant',
  'letterSpacing',
  'lineHeight',
  'textAlign',
  'textTransform',
  'textDecoration',
  'textShadow',
  'borderColor',
  'borderStyle',
  'borderWidth',
  'borderRadius',
  'padding',
  'outlineColor',
] as const;
export type StyleProperty = (typeof STYLE_PROPERTIES)[number];

export type StateStyle = Partial<Record<StyleProperty, string>>;
export type FieldsStyle = Partial<Record<StyleState, StateStyle>>;

export const MAX_STYLE_VALUE_LENGTH = 200;

export type StyleCheck = { ok: true; style: FieldsStyle } | { ok: false; message: string };

/**
 * `url(` loads a resource (a tracking pixel, or a font that exfiltrates keystrokes via
 * unicode-range); a backslash could spell it with CSS escapes (`u\72l(`); `;{}<>@` would end the
 * declaration or the style sheet. Everything else a plain value needs is letters, digits,
 * spaces and `#%.,()'"-+/*`.
 */
const FORBIDDEN_VALUE = /url\s*\(|image-set\s*\(|image\s*\(|expression\s*\(|[\\;{}<>@]/i;
const ALLOWED_VALUE = /^[\w\s#%.,()'"+\-/*!]*$/;

/**
 * The only CSS functions a value may call: colours and arithmetic on lengths. Everything else is
 * refused, not only what is known to be harmful today: `var(--x)` and `env()` read values the
 * merchant's check never saw, `attr()` reads the field's own attributes (CSS Values 5 lets it into
 * any property), and the next new function is unknown. A bare `(` (grouping inside `calc()`) is
 * allowed: only a name before `(` makes a function.
 */
export const STYLE_FUNCTIONS = [
  'rgb',
  'rgba',
  'hsl',
  'hsla',
  'hwb',
  'lab',
  'lch',
  'oklab',
  'oklch',
  'color',
  'color-mix',
  'calc',
  'min',
  'max',
  'clamp',
] as const;

/** A name before `(`, with any spaces between (CSS names are case-insensitive). */
const FUNCTION_NAME = /[\w-]+(?=\s*\()/g;

function unknownFunctionIn(value: string): string | undefined {
  return (value.match(FUNCTION_NAME) ?? []).find((name) => !(STYLE_FUNCTIONS as readonly string[]).includes(name.toLowerCase()));
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function checkStyleValue(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'must be a string';
  if (value.length > MAX_STYLE_VALUE_LENGTH) return `must be at most ${MAX_STYLE_VALUE_LENGTH} characters`;
  if (FORBIDDEN_VALUE.test(value) || !ALLOWED_VALUE.test(value)) {
    return 'must be a plain CSS value (no url(), escapes, or the characters ; { } < > @)';
  }
  const called = unknownFunctionIn(value);
  if (called !== undefined) return `may call only ${STYLE_FUNCTIONS.map((f) => `${f}()`).join(', ')}; not ${called}()`;
  return undefined;
}

/** The style option, checked: every state, every property and every value, or the first problem. */
export function checkFieldsStyle(input: unknown): StyleCheck {
  if (input === undefined) return { ok: true, style: {} };
  if (!isRecord(input)) return { ok: false, message: 'style must be an object of states (base, focus, invalid, complete)' };
  const style: FieldsStyle = {};
  for (const [state, declarations] of Object.entries(input)) {
    if (!(STYLE_STATES as readonly string[]).includes(state)) {
      return { ok: false, message: `style.${state} is not a state: use ${STYLE_STATES.join(', ')}` };
    }
    if (!isRecord(declarations)) return { ok: false, message: `style.${state} must be an object of CSS properties` };
    const checked: StateStyle = {};
    for (const [property, value] of Object.entries(declarations)) {
      if (!(STYLE_PROPERTIES as readonly string[]).includes(property)) {
        return { ok: false, message: `style.${state}.${property} is not a property the card fields accept` };
      }
      const problem = checkStyleValue(value);
      if (problem !== undefined) return { ok: false, message: `style.${state}.${property} ${problem}` };
      checked[property as StyleProperty] = value as string;
    }
    style[state as StyleState] = checked;
  }
  return { ok: true, style };
}

/** `backgroundColor` -> `background-color`. */
export function cssPropertyName(property: StyleProperty): string {
  return property.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** The declarations in force for a field: base, then each active state over it (later wins). */
export function styleFor(style: FieldsStyle, states: { focus: boolean; invalid: boolean; complete: boolean }): StateStyle {
  return {
    ...style.base,
    ...(states.complete ? style.complete : undefined),
    ...(states.focus ? style.focus : undefined),
    ...(states.invalid ? style.invalid : undefined),
  };
}

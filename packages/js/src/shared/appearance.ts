/**
 * How the card fields look and read: a theme with variables and rules (labels, inputs, errors,
 * spacing, fonts), label and placeholder text, hidden labels, and the language. Checked here, by
 * the same code, twice: in tessera.js on the merchant's page (so a mistake throws at once, with
 * TesseraError 'invalid_appearance' or 'invalid_locale'), and in the iframe, which trusts nothing
 * the page sends and drops a handshake that fails.
 *
 * Values pass style.ts's checkStyleValue (no url(), escapes or unknown functions: the iframe loads
 * nothing a merchant names), fonts are the few the fields origin serves or a system stack, and
 * colours are held to WCAG AA contrast (contrast.ts): a theme whose text fails is refused, naming
 * the pair and its ratio. A colour that cannot be evaluated here (color-mix(), oklch(), …) is
 * accepted, but for that pair the fields keep the theme's own colour (or black or white, whichever
 * passes), so what the shopper sees has been checked.
 */
import {
  composite,
  contrastRatio,
  formatRatio,
  NON_TEXT_CONTRAST,
  parseColor,
  relativeLuminance,
  TEXT_CONTRAST,
  type Rgba,
} from './contrast';
import { isLocaleOption, type LocaleOption } from './locale';
import { checkStyleValue, cssPropertyName, STYLE_PROPERTIES, type StyleProperty } from './style';

export const THEMES = ['default', 'night', 'flat'] as const;
export type Theme = (typeof THEMES)[number];

export const COLOR_VARIABLES = [
  'colorPrimary',
  'colorBackground',
  'colorInputBackground',
  'colorText',
  'colorTextSecondary',
  'colorTextPlaceholder',
  'colorDanger',
  'colorBorder',
] as const;
export const LENGTH_VARIABLES = ['fontSizeBase', 'fontSizeSm', 'spacingUnit', 'borderRadius', 'borderWidth'] as const;
export const APPEARANCE_VARIABLES = [...COLOR_VARIABLES, ...LENGTH_VARIABLES, 'fontFamily', 'fontWeightLabel', 'fontLineHeight'] as const;
export type AppearanceVariable = (typeof APPEARANCE_VARIABLES)[number];
export type AppearanceVariables = Partial<Record<AppearanceVariable, string>>;

/** What a label or an error message may change: its type, never its box or background. */
const TEXT_RULE_PROPERTIES = [
  'color',
  'fontFamily',
  'fontSize',
  'fontStyle',
  'fontWeight',
  'fontVariant',
  'letterSpacing',
  'lineHeight',
  'textTransform',
  'textDecoration',
  'textShadow',
] as const;
/** An input, per state: the `style` option's properties, and a shadow (a common focus ring). */
const INPUT_RULE_PROPERTIES = [...STYLE_PROPERTIES, 'boxShadow'] as const;
export type RuleProperty = StyleProperty | 'boxShadow';

export const APPEARANCE_RULES = {
  '.Label': TEXT_RULE_PROPERTIES,
  '.Input': INPUT_RULE_PROPERTIES,
  '.Input--complete': INPUT_RULE_PROPERTIES,
  '.Input:focus': INPUT_RULE_PROPERTIES,
  '.Input--invalid': INPUT_RULE_PROPERTIES,
  '.Error': TEXT_RULE_PROPERTIES,
} as const;
export type RuleSelector = keyof typeof APPEARANCE_RULES;
export const RULE_SELECTORS = Object.keys(APPEARANCE_RULES) as RuleSelector[];
export type RuleStyle = Partial<Record<RuleProperty, string>>;
export type AppearanceRules = Partial<Record<RuleSelector, RuleStyle>>;

export interface Appearance {
  theme?: Theme;
  variables?: AppearanceVariables;
  rules?: AppearanceRules;
}

/** The inputs whose label and placeholder a merchant may reword. */
export const TEXT_FIELDS = ['number', 'expiry', 'cvc', 'name'] as const;
export type TextField = (typeof TEXT_FIELDS)[number];
export type FieldTexts = Partial<Record<TextField, string>>;

/** Everything about the fields' look and words, as tessera.js sends it in the handshake (and `update` sends again). */
export interface FieldsPresentation {
  appearance?: Appearance;
  locale?: LocaleOption;
  labels?: FieldTexts;
  placeholders?: FieldTexts;
  /** Labels hidden visually; inputs keep them as their accessible names. */
  hideLabels?: boolean;
}

/** The fonts the fields origin serves (/fields/v1/fonts/, declared in the fields page's style): all SIL OFL 1.1. */
export const SERVED_FONTS = ['Inter', 'Lora'] as const;
/**
 * Families that are never downloaded: the generic ones and fonts that come with common systems.
 * Any other name is refused rather than silently missing (the fields load no font from elsewhere:
 * a remote font can read keystrokes through unicode-range).
 */
const SYSTEM_FONTS = [
  'serif',
  'sans-serif',
  'monospace',
  'cursive',
  'fantasy',
  'math',
  'emoji',
  'system-ui',
  'ui-serif',
  'ui-sans-serif',
  'ui-monospace',
  'ui-rounded',
  '-apple-system',
  'BlinkMacSystemFont',
  'Segoe UI',
  'Roboto',
  'Helvetica Neue',
  'Helvetica',
  'Arial',
  'Noto Sans',
  'Liberation Sans',
  'Ubuntu',
  'Cantarell',
  'Verdana',
  'Tahoma',
  'Trebuchet MS',
  'Georgia',
  'Times New Roman',
  'Times',
  'Cambria',
  'Palatino',
  'Courier New',
  'Menlo',
  'Consolas',
  'Monaco',
  'Apple Color Emoji',
  'Segoe UI Emoji',
  'Noto Color Emoji',
] as const;

const SYSTEM_STACK = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';

type ThemeSpec = { variables: Record<AppearanceVariable, string>; rules: AppearanceRules };

const DEFAULT_THEME: ThemeSpec = {
  variables: {
    colorPrimary: '#0b5fff',
    colorBackground: '#ffffff',
    colorInputBackground: '#ffffff',
    colorText: '#1a1a1a',
    colorTextSecondary: '#4d4d4d',
    colorTextPlaceholder: '#6b6b6b',
    colorDanger: '#b00020',
    colorBorder: '#767676',
    fontSizeBase: '16px',
    fontSizeSm: '14px',
    spacingUnit: '4px',
    borderRadius: '6px',
    borderWidth: '1px',
    fontFamily: SYSTEM_STACK,
    fontWeightLabel: '600',
    fontLineHeight: '1.4',
  },
  rules: {},
};

/** The theme values, each checked by the tests against the contrast rules below. */
export const THEME_SPECS: Readonly<Record<Theme, ThemeSpec>> = {
  default: DEFAULT_THEME,
  night: {
    variables: {
      ...DEFAULT_THEME.variables,
      colorPrimary: '#85a9ff',
      colorBackground: '#1c1d26',
      colorInputBackground: '#2a2c38',
      colorText: '#f2f3f7',
      colorTextSecondary: '#b9bccb',
      colorTextPlaceholder: '#a0a4b8',
      colorDanger: '#ff8f9f',
      colorBorder: '#8a8fa6',
    },
    rules: {},
  },
  flat: {
    variables: {
      ...DEFAULT_THEME.variables,
      colorInputBackground: '#f1f3f5',
      colorTextPlaceholder: '#5f6368',
      colorBorder: '#7b8089',
      borderRadius: '2px',
      fontWeightLabel: '600',
    },
    rules: { '.Label': { textTransform: 'uppercase', letterSpacing: '0.04em', fontSize: '12px' } },
  },
};

/** The custom properties of the fields page's style (services/fields cardFieldsPage.ts) that the variables set. */
export const CUSTOM_PROPERTIES = [
  '--tc-primary',
  '--tc-bg',
  '--tc-input-bg',
  '--tc-label',
  '--tc-input-text',
  '--tc-secondary',
  '--tc-placeholder',
  '--tc-danger',
  '--tc-border',
  '--tc-font',
  '--tc-font-size',
  '--tc-font-size-sm',
  '--tc-label-weight',
  '--tc-line-height',
  '--tc-gap',
  '--tc-label-gap',
  '--tc-pad-y',
  '--tc-pad-x',
  '--tc-radius',
  '--tc-border-width',
] as const;
export type CustomProperty = (typeof CUSTOM_PROPERTIES)[number];

/** What the iframe sets: custom properties on its root, and per rule the CSS declarations (CSS names). */
export interface ResolvedAppearance {
  properties: Record<CustomProperty, string>;
  rules: Partial<Record<RuleSelector, Record<string, string>>>;
  /** Pairs whose colour could not be evaluated, so the fields keep the theme's (or black/white). */
  keptDefault: string[];
}

export type PresentationCheck =
  | { ok: true; presentation: FieldsPresentation; resolved?: ResolvedAppearance }
  | { ok: false; code: 'invalid_appearance' | 'invalid_locale'; message: string };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const oneOf = <T extends string>(list: readonly T[], v: unknown): v is T =>
  typeof v === 'string' && (list as readonly string[]).includes(v);

class AppearanceProblem extends Error {}
const refuse = (message: string): never => {
  throw new AppearanceProblem(message);
};

/** A length as a theme needs one: `4px`, `0.25rem`, `1em`, `0`. */
const LENGTH = /^(0|\d{1,3}(\.\d{1,3})?(px|rem|em))$/;
const FONT_WEIGHT = /^(normal|bold|[1-9]00)$/;
const LINE_HEIGHT = /^(normal|\d(\.\d{1,3})?)$/;

/** `"Inter", system-ui` -> ['Inter', 'system-ui']; quotes are optional in CSS. */
function familiesOf(value: string): string[] {
  return value.split(',').map((f) => f.trim().replace(/^(['"])(.*)\1$/, '$2'));
}

function checkFontFamily(value: string, where: string): void {
  const allowed = [...SERVED_FONTS, ...SYSTEM_FONTS].map((f) => f.toLowerCase());
  for (const family of familiesOf(value)) {
    if (!allowed.includes(family.toLowerCase())) {
      refuse(
        `${where}: "${family}" is neither a font the fields serve (${SERVED_FONTS.join(', ')}) nor a system font ` +
          `(system-ui, sans-serif, serif, Arial, Georgia, …); the fields load no font from any other origin`,
      );
    }
  }
}

function checkVariable(name: AppearanceVariable, value: unknown): string {
  const where = `appearance.variables.${name}`;
  const problem = checkStyleValue(value);
  if (problem !== undefined) refuse(`${where} ${problem}`);
  const text = value as string;
  if ((LENGTH_VARIABLES as readonly string[]).includes(name) && !LENGTH.test(text)) {
    refuse(`${where} must be a length such as 4px, 0.25rem or 1em`);
  }
  if (name === 'fontFamily') checkFontFamily(text, where);
  if (name === 'fontWeightLabel' && !FONT_WEIGHT.test(text)) refuse(`${where} must be normal, bold or 100-900`);
  if (name === 'fontLineHeight' && !LINE_HEIGHT.test(text)) refuse(`${where} must be a number such as 1.4`);
  return text;
}

function checkRules(input: unknown): AppearanceRules {
  if (input === undefined) return {};
  if (!isRecord(input)) return refuse(`appearance.rules must be an object of ${RULE_SELECTORS.join(', ')}`);
  const rules: AppearanceRules = {};
  for (const [selector, declarations] of Object.entries(input)) {
    if (!oneOf(RULE_SELECTORS, selector)) refuse(`appearance.rules['${selector}'] is not a rule: use ${RULE_SELECTORS.join(', ')}`);
    const where = `appearance.rules['${selector}']`;
    if (!isRecord(declarations)) refuse(`${where} must be an object of CSS properties`);
    const allowed: readonly string[] = APPEARANCE_RULES[selector as RuleSelector];
    const checked: RuleStyle = {};
    for (const [property, value] of Object.entries(declarations as Record<string, unknown>)) {
      if (!allowed.includes(property)) refuse(`${where}.${property} is not a property ${selector} accepts (${allowed.join(', ')})`);
      const problem = checkStyleValue(value);
      if (problem !== undefined) refuse(`${where}.${property} ${problem}`);
      if (property === 'fontFamily') checkFontFamily(value as string, `${where}.fontFamily`);
      checked[property as RuleProperty] = value as string;
    }
    rules[selector as RuleSelector] = checked;
  }
  return rules;
}

export function checkAppearanceShape(input: unknown): Appearance {
  if (!isRecord(input)) return refuse('appearance must be an object: { theme, variables, rules }');
  const unknown = Object.keys(input).find((k) => !['theme', 'variables', 'rules'].includes(k));
  if (unknown !== undefined) refuse(`appearance.${unknown} is not an option: use theme, variables and rules`);
  if (input.theme !== undefined && !oneOf(THEMES, input.theme)) refuse(`appearance.theme must be one of ${THEMES.join(', ')}`);
  const variables: AppearanceVariables = {};
  if (input.variables !== undefined) {
    if (!isRecord(input.variables)) refuse('appearance.variables must be an object');
    for (const [name, value] of Object.entries(input.variables as Record<string, unknown>)) {
      if (!oneOf(APPEARANCE_VARIABLES, name))
        refuse(`appearance.variables.${name} is not a variable: use ${APPEARANCE_VARIABLES.join(', ')}`);
      variables[name as AppearanceVariable] = checkVariable(name as AppearanceVariable, value);
    }
  }
  return { theme: (input.theme as Theme | undefined) ?? 'default', variables, rules: checkRules(input.rules) };
}

/** A colour in force, where it came from (for the message), and where a kept default is written. */
interface ColorSlot {
  value: string;
  source: string;
  rule?: { selector: RuleSelector; property: RuleProperty };
  property?: CustomProperty;
}

/**
 * The colours in force and their contrast, checked pair by pair (see the module comment). Mutates
 * `variables` and `rules` where a colour that cannot be evaluated falls back to the theme's.
 */
function resolveColors(
  theme: ThemeSpec,
  variables: Record<AppearanceVariable, string>,
  rules: AppearanceRules,
): { kept: string[]; overrides: Partial<Record<CustomProperty, string>> } {
  const kept: string[] = [];
  /** Single custom properties kept at a default (the label's colour, while the input's stays the merchant's). */
  const overrides: Partial<Record<CustomProperty, string>> = {};
  const T = theme.variables;

  // The page background: painted behind the fields, so what is checked is what is shown. It must
  // be opaque: behind a translucent one shows the merchant's page, which the fields cannot see.
  let page = parseColor(variables.colorBackground);
  if (page === undefined || page.a < 1) {
    kept.push(`the background (variables.colorBackground ${variables.colorBackground})`);
    variables.colorBackground = T.colorBackground;
    page = parseColor(T.colorBackground) as Rgba;
  }
  const pageBg = page;

  /** A background over another: translucent ones are composited; one we cannot read falls back. */
  const backgroundOf = (slot: ColorSlot, under: Rgba, fallback: Rgba, fix: () => void): Rgba => {
    const parsed = parseColor(slot.value);
    if (parsed !== undefined) return parsed.a < 1 ? composite(parsed, under) : parsed;
    kept.push(`${slot.source} (${slot.value})`);
    fix();
    return fallback;
  };

  const inputRule = rules['.Input'] ?? {};
  const inputBgSlot: ColorSlot =
    inputRule.backgroundColor !== undefined
      ? { value: inputRule.backgroundColor, source: "rules['.Input'].backgroundColor" }
      : { value: variables.colorInputBackground, source: 'variables.colorInputBackground' };
  let inputName = `the input background (${inputBgSlot.value})`;
  const inputBg = backgroundOf(inputBgSlot, pageBg, parseColor(T.colorInputBackground) as Rgba, () => {
    delete inputRule.backgroundColor;
    variables.colorInputBackground = T.colorInputBackground;
    inputName = `the input background (${T.colorInputBackground})`;
  });

  const write = (slot: ColorSlot, value: string): void => {
    if (slot.rule !== undefined) {
      const rule = (rules[slot.rule.selector] ??= {});
      rule[slot.rule.property] = value;
    }
    if (slot.property !== undefined) overrides[slot.property] = value;
  };

  /**
   * One foreground on one background: refused below `minimum`; a colour we cannot evaluate is
   * replaced by the theme's, or black or white when the theme's fails on this background.
   */
  const check = (slot: ColorSlot, background: Rgba, backgroundName: string, minimum: number, themeValue: string, what: string): void => {
    const parsed = parseColor(slot.value);
    if (parsed === undefined) {
      const candidates = [themeValue, '#000000', '#ffffff'];
      const fallback =
        candidates.find((c) => contrastRatio(parseColor(c) as Rgba, background) >= minimum) ??
        (relativeLuminance(background) > 0.18 ? '#000000' : '#ffffff');
      kept.push(`${what} (${slot.source} ${slot.value})`);
      write(slot, fallback);
      return;
    }
    const ratio = contrastRatio(parsed, background);
    if (ratio < minimum) {
      refuse(
        `appearance: ${what} (${slot.source} ${slot.value}) on ${backgroundName} has a contrast of ${formatRatio(ratio)}; ` +
          `WCAG AA needs at least ${formatRatio(minimum)}`,
      );
    }
  };

  const bgName = `the background (${variables.colorBackground})`;
  const ruleColor = (selector: RuleSelector, property: RuleProperty, fallback: ColorSlot): ColorSlot => {
    const value = rules[selector]?.[property];
    return value === undefined ? fallback : { value, source: `rules['${selector}'].${property}`, rule: { selector, property } };
  };
  const variable = (name: (typeof COLOR_VARIABLES)[number], property: CustomProperty): ColorSlot => ({
    value: variables[name],
    source: `variables.${name}`,
    property,
  });

  check(ruleColor('.Label', 'color', variable('colorText', '--tc-label')), pageBg, bgName, TEXT_CONTRAST, T.colorText, 'the label text');
  check(
    ruleColor('.Error', 'color', variable('colorDanger', '--tc-danger')),
    pageBg,
    bgName,
    TEXT_CONTRAST,
    T.colorDanger,
    'the error text',
  );
  const inputText = ruleColor('.Input', 'color', variable('colorText', '--tc-input-text'));
  check(inputText, inputBg, inputName, TEXT_CONTRAST, T.colorText, 'the input text');
  check(variable('colorTextPlaceholder', '--tc-placeholder'), inputBg, inputName, TEXT_CONTRAST, T.colorTextPlaceholder, 'the placeholder');
  check(variable('colorTextSecondary', '--tc-secondary'), inputBg, inputName, TEXT_CONTRAST, T.colorTextSecondary, 'the card brand text');

  // Each state's text on each state's background (a state rule may change either).
  for (const selector of ['.Input--complete', '.Input:focus', '.Input--invalid'] as const) {
    const rule = rules[selector];
    if (rule === undefined || (rule.color === undefined && rule.backgroundColor === undefined)) continue;
    let background = inputBg;
    let name = inputName;
    if (rule.backgroundColor !== undefined) {
      name = `rules['${selector}'].backgroundColor (${rule.backgroundColor})`;
      const slot = { value: rule.backgroundColor, source: `rules['${selector}'].backgroundColor` };
      background = backgroundOf(slot, pageBg, inputBg, () => {
        delete rule.backgroundColor;
        name = inputName;
      });
    }
    const text = ruleColor(selector, 'color', { value: inputText.value, source: inputText.source, rule: { selector, property: 'color' } });
    check(text, background, name, TEXT_CONTRAST, T.colorText, `the input text in ${selector}`);
  }

  // WCAG 1.4.11: an input's boundary is seen by its border or by its own background; the focus ring must show.
  if (contrastRatio(inputBg, pageBg) < NON_TEXT_CONTRAST) {
    check(
      ruleColor('.Input', 'borderColor', variable('colorBorder', '--tc-border')),
      pageBg,
      bgName,
      NON_TEXT_CONTRAST,
      T.colorBorder,
      'the input border',
    );
  }
  check(
    ruleColor('.Input:focus', 'outlineColor', variable('colorPrimary', '--tc-primary')),
    pageBg,
    bgName,
    NON_TEXT_CONTRAST,
    T.colorPrimary,
    'the focus ring',
  );
  return { kept, overrides };
}

/**
 * The appearance in force: theme under the merchant's variables and rules, colours checked, as
 * custom properties and CSS declarations. Throws AppearanceProblem for a failing pair.
 */
function resolve(appearance: Appearance): ResolvedAppearance {
  const theme = THEME_SPECS[appearance.theme ?? 'default'];
  const variables = { ...theme.variables, ...appearance.variables };
  const rules: AppearanceRules = {};
  for (const selector of RULE_SELECTORS) {
    const merged = { ...theme.rules[selector], ...appearance.rules?.[selector] };
    if (Object.keys(merged).length > 0) rules[selector] = merged;
  }
  const { kept: keptDefault, overrides } = resolveColors(theme, variables, rules);
  const unit = variables.spacingUnit;
  const properties: Record<CustomProperty, string> = {
    '--tc-primary': variables.colorPrimary,
    '--tc-bg': variables.colorBackground,
    '--tc-input-bg': variables.colorInputBackground,
    '--tc-label': variables.colorText,
    '--tc-input-text': variables.colorText,
    '--tc-secondary': variables.colorTextSecondary,
    '--tc-placeholder': variables.colorTextPlaceholder,
    '--tc-danger': variables.colorDanger,
    '--tc-border': variables.colorBorder,
    '--tc-font': variables.fontFamily,
    '--tc-font-size': variables.fontSizeBase,
    '--tc-font-size-sm': variables.fontSizeSm,
    '--tc-label-weight': variables.fontWeightLabel,
    '--tc-line-height': variables.fontLineHeight,
    '--tc-gap': `calc(${unit} * 2.5)`,
    '--tc-label-gap': unit,
    '--tc-pad-y': `calc(${unit} * 2.5)`,
    '--tc-pad-x': `calc(${unit} * 3)`,
    '--tc-radius': variables.borderRadius,
    '--tc-border-width': variables.borderWidth,
    ...overrides,
  };
  const declarations: ResolvedAppearance['rules'] = {};
  for (const [selector, rule] of Object.entries(rules) as [RuleSelector, RuleStyle][]) {
    declarations[selector] = Object.fromEntries(
      Object.entries(rule).map(([property, value]) => [cssPropertyName(property as StyleProperty), value as string]),
    );
  }
  return { properties, rules: declarations, keptDefault };
}

export function resolveAppearance(appearance: Appearance): { ok: true; resolved: ResolvedAppearance } | { ok: false; message: string } {
  try {
    return { ok: true, resolved: resolve(appearance) };
  } catch (err) {
    if (err instanceof AppearanceProblem) return { ok: false, message: err.message };
    throw err;
  }
}

export const MAX_LABEL_LENGTH = 80;
export const MAX_PLACEHOLDER_LENGTH = 60;
/** Control characters, invisible and direction-changing characters: plain text is what it looks like. */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const UNSAFE_TEXT = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;

function checkTexts(input: unknown, option: 'labels' | 'placeholders'): FieldTexts {
  if (!isRecord(input)) return refuse(`${option} must be an object of ${TEXT_FIELDS.join(', ')}`);
  const max = option === 'labels' ? MAX_LABEL_LENGTH : MAX_PLACEHOLDER_LENGTH;
  const texts: FieldTexts = {};
  for (const [field, value] of Object.entries(input)) {
    if (!oneOf(TEXT_FIELDS, field)) refuse(`${option}.${field} is not a field: use ${TEXT_FIELDS.join(', ')}`);
    if (typeof value !== 'string') refuse(`${option}.${field} must be a string`);
    const text = value as string;
    if (text.length > max) refuse(`${option}.${field} must be at most ${max} characters`);
    // An input's label is its accessible name: it may be hidden (hideLabels), never empty.
    if (option === 'labels' && text.trim() === '') refuse(`${option}.${field} must not be empty (use hideLabels to hide labels)`);
    if (UNSAFE_TEXT.test(text)) refuse(`${option}.${field} must be plain text (no control, invisible or direction characters)`);
    texts[field as TextField] = text;
  }
  return texts;
}

const PRESENTATION_KEYS = ['appearance', 'locale', 'labels', 'placeholders', 'hideLabels'] as const;

/** The presentation options out of a larger options object (cardFields' options), those that are set. */
export function presentationOptionsOf(options: Partial<Record<(typeof PRESENTATION_KEYS)[number], unknown>>): Record<string, unknown> {
  return Object.fromEntries(PRESENTATION_KEYS.filter((k) => options[k] !== undefined).map((k) => [k, options[k]]));
}

/**
 * The presentation options checked: shape, values, fonts and contrast. `resolved` is the
 * appearance as the iframe applies it (absent without `appearance`: the fields keep their
 * built-in look).
 */
export function checkPresentation(input: unknown): PresentationCheck {
  if (!isRecord(input)) return { ok: false, code: 'invalid_appearance', message: 'the presentation options must be an object' };
  const unknown = Object.keys(input).find((k) => !(PRESENTATION_KEYS as readonly string[]).includes(k));
  if (unknown !== undefined) return { ok: false, code: 'invalid_appearance', message: `${unknown} is not a presentation option` };
  if (input.locale !== undefined && !isLocaleOption(input.locale)) {
    return { ok: false, code: 'invalid_locale', message: `locale must be one of auto, en, de, fr, es, nl (not ${String(input.locale)})` };
  }
  try {
    const presentation: FieldsPresentation = {};
    let resolved: ResolvedAppearance | undefined;
    if (input.appearance !== undefined) {
      presentation.appearance = checkAppearanceShape(input.appearance);
      const result = resolveAppearance(presentation.appearance);
      if (!result.ok) refuse(result.message);
      else resolved = result.resolved;
    }
    if (input.locale !== undefined) presentation.locale = input.locale as LocaleOption;
    if (input.labels !== undefined) presentation.labels = checkTexts(input.labels, 'labels');
    if (input.placeholders !== undefined) presentation.placeholders = checkTexts(input.placeholders, 'placeholders');
    if (input.hideLabels !== undefined) {
      if (typeof input.hideLabels !== 'boolean') refuse('hideLabels must be true or false');
      presentation.hideLabels = input.hideLabels as boolean;
    }
    return resolved === undefined ? { ok: true, presentation } : { ok: true, presentation, resolved };
  } catch (err) {
    if (err instanceof AppearanceProblem) return { ok: false, code: 'invalid_appearance', message: err.message };
    throw err;
  }
}

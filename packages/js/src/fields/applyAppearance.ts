/**
 * Applies the merchant's presentation (shared/appearance.ts: theme, variables, rules, texts,
 * hidden labels, language) to the card-fields iframe's document. It takes the whole checked
 * options and sets everything from them, clearing what an earlier call set, so the handshake and
 * any later update apply the same way and the same options twice change nothing.
 *
 * Texts are set with textContent and attribute values, never as HTML. Styles go through the CSSOM
 * (custom properties on the root, declarations on elements), which the page's CSP allows without
 * 'unsafe-inline'; every value was checked by checkPresentation, here in the iframe.
 */
import {
  APPEARANCE_RULES,
  CUSTOM_PROPERTIES,
  resolveAppearance,
  TEXT_FIELDS,
  type FieldsPresentation,
  type ResolvedAppearance,
  type RuleSelector,
  type TextField,
} from '../shared/appearance';
import { LOCALE_TEXTS, resolveLocale, type FieldsText, type Locale } from '../shared/locale';
import { cssPropertyName, STYLE_PROPERTIES, styleFor, type FieldsStyle, type StyleProperty } from '../shared/style';
import type { InputStates } from './cardInputs';

/** The inputs of cardInputsMarkup, by field. */
const INPUT_IDS: Record<TextField, string> = { number: 'cc-number', expiry: 'cc-exp', cvc: 'cc-csc', name: 'cc-name' };

/** Every CSS property an input rule or the `style` option may set on an input (CSS names). */
const INPUT_CSS_PROPERTIES = [...STYLE_PROPERTIES.map(cssPropertyName), 'box-shadow'];
const TEXT_CSS_PROPERTIES = APPEARANCE_RULES['.Label'].map((p) => cssPropertyName(p as StyleProperty));

export interface AppliedPresentation {
  locale: Locale;
  text: FieldsText;
  /** Undefined without an appearance (the fields keep their built-in look). */
  resolved: ResolvedAppearance | undefined;
}

function setDeclarations(element: HTMLElement, properties: readonly string[], declarations: Record<string, string> | undefined): void {
  for (const property of properties) {
    const value = declarations?.[property];
    if (value === undefined) element.style.removeProperty(property);
    else element.style.setProperty(property, value);
  }
}

/**
 * Sets the presentation on `doc` (labels, placeholders, hidden labels, `lang`, heading, theme).
 * `presentation` must come from checkPresentation; an appearance that fails its check here
 * (it cannot, after that) is left out rather than half applied.
 */
export function applyPresentation(
  doc: Document,
  presentation: FieldsPresentation,
  browserLanguages: readonly string[],
): AppliedPresentation {
  const locale = resolveLocale(presentation.locale, browserLanguages);
  const text = LOCALE_TEXTS[locale];
  doc.documentElement.lang = locale;

  for (const field of TEXT_FIELDS) {
    const input = doc.getElementById(INPUT_IDS[field]) as HTMLInputElement | null;
    const label = doc.querySelector<HTMLLabelElement>(`label[for="${INPUT_IDS[field]}"]`);
    const labelText = presentation.labels?.[field] ?? text.labels[field];
    if (label !== null) {
      label.textContent = labelText;
      // Hidden for the eye only: the label stays the input's accessible name.
      label.classList.toggle('visually-hidden', presentation.hideLabels === true);
    }
    // With labels hidden, an input with no placeholder of its own shows its label there (the merchant's '' stays none).
    const own = presentation.placeholders?.[field];
    const builtIn = text.placeholders[field];
    const placeholder = own ?? (presentation.hideLabels === true && builtIn === '' ? labelText : builtIn);
    if (input !== null) {
      if (placeholder === '') input.removeAttribute('placeholder');
      else input.placeholder = placeholder;
    }
  }
  const heading = doc.getElementById('fields-title');
  if (heading !== null) heading.textContent = text.formTitle;
  const standalone = doc.getElementById('standalone');
  if (standalone !== null) standalone.textContent = text.standalone;

  const checked = presentation.appearance === undefined ? undefined : resolveAppearance(presentation.appearance);
  const resolved = checked?.ok === true ? checked.resolved : undefined;
  const root = doc.documentElement;
  for (const property of CUSTOM_PROPERTIES) {
    const value = resolved?.properties[property];
    if (value === undefined) root.style.removeProperty(property);
    else root.style.setProperty(property, value);
  }
  for (const label of doc.querySelectorAll<HTMLElement>('label')) setDeclarations(label, TEXT_CSS_PROPERTIES, resolved?.rules['.Label']);
  for (const error of doc.querySelectorAll<HTMLElement>('.errors p'))
    setDeclarations(error, TEXT_CSS_PROPERTIES, resolved?.rules['.Error']);
  return { locale, text, resolved };
}

/**
 * An input's declarations for its states: the appearance's `.Input` rules (base, then complete,
 * focus, invalid over it, as in CSS order), then the older `style` option over those.
 */
export function styleFieldInput(
  input: HTMLInputElement,
  states: InputStates,
  style: FieldsStyle,
  applied: AppliedPresentation | undefined,
): void {
  const rules = applied?.resolved?.rules ?? {};
  const layers: (RuleSelector | false)[] = [
    '.Input',
    states.complete && '.Input--complete',
    states.focus && '.Input:focus',
    states.invalid && '.Input--invalid',
  ];
  const declarations: Record<string, string> = {};
  for (const layer of layers) if (layer !== false) Object.assign(declarations, rules[layer]);
  for (const [property, value] of Object.entries(styleFor(style, states))) {
    if (value !== undefined) declarations[cssPropertyName(property as StyleProperty)] = value;
  }
  setDeclarations(input, INPUT_CSS_PROPERTIES, declarations);
}

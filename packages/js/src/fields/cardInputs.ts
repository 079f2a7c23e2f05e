/**
 * The card inputs' behaviour as the shopper types, shared by the two pages that collect a card on
 * the fields origin: the card-fields iframe (fields/page.ts) and the hosted payment page
 * (hosted/page.ts). Both render the same markup (the gateway's cardInputsMarkup), so the same
 * formatting, brand label, and errors-after-blur apply to both.
 */
import { LOCALE_TEXTS, type FieldsText } from '../shared/locale';
import type { AcceptedBrand, ChangeEventPayload, FieldErrorCode, FieldName } from '../shared/protocol';
import { withAcceptedBrands } from './acceptedBrands';
import {
  changePayload,
  checkAll,
  digitsOf,
  formatCardNumber,
  formatExpiry,
  type CardField,
  type FieldChecks,
  type FieldValues,
} from './cardState';

export const CARD_FIELDS = ['number', 'expiry', 'cvc'] as const;

export function byId<T extends HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`card fields: #${id} is missing`);
  return el as T;
}

export interface InputStates {
  focus: boolean;
  invalid: boolean;
  complete: boolean;
}

export interface CardInputHooks {
  onFocus?(field: FieldName): void;
  onBlur?(field: FieldName): void;
  /** After every check: what the merchant's page would be told. */
  onChecked?(payload: ChangeEventPayload, checks: FieldChecks): void;
  /** Styles an input for its states (the iframe applies the merchant's whitelisted style). */
  styleInput?(input: HTMLInputElement, states: InputStates): void;
}

export interface CardInputs {
  inputs: Record<FieldName, HTMLInputElement>;
  values(): FieldValues;
  update(): { payload: ChangeEventPayload; checks: FieldChecks };
  /** Shows every card field's error (a submit attempt); returns the first problem, if any. */
  showAll(): FieldErrorCode | undefined;
  clear(): void;
  /** Checks and shows only these inputs from now on (the CVC-only field: ['cvc']); the others are hidden. */
  only(fields: readonly CardField[]): void;
  /** The language of the error messages and the brand text from now on (shared/locale.ts); English until set. */
  setText(text: FieldsText): void;
  /** Refuses cards of other brands from now on (undefined: every brand). */
  acceptBrands(brands: readonly AcceptedBrand[] | undefined): void;
  /**
   * Shows a refusal the server gave for the card (e.g. a live card in test mode) at the field it is
   * about, in the live region, until the shopper changes the card.
   */
  showRefusal(field: CardField, message: string): void;
}

export function wireCardInputs(hooks: CardInputHooks = {}): CardInputs {
  const inputs: Record<FieldName, HTMLInputElement> = {
    number: byId('cc-number'),
    expiry: byId('cc-exp'),
    cvc: byId('cc-csc'),
    name: byId('cc-name'),
  };
  const errorOf: Record<FieldName, HTMLElement> = {
    number: byId('cc-number-error'),
    expiry: byId('cc-exp-error'),
    cvc: byId('cc-csc-error'),
    name: byId('cc-name-error'),
  };
  const brandLabel = byId('cc-brand');
  /** Fields whose error the shopper is shown: set when a field loses focus, cleared once it is right. */
  const shown = new Set<FieldName>();
  let inPlay: readonly CardField[] = CARD_FIELDS;
  let text: FieldsText = LOCALE_TEXTS.en;
  let accepted: readonly AcceptedBrand[] | undefined;
  /** The number's error is shown only because of its brand, not because the shopper left the field. */
  let shownForBrand = false;
  /** The server's last refusal of this card, shown until the shopper types. */
  let refusal: { field: CardField; message: string } | undefined;

  const values = (): FieldValues => ({
    number: inputs.number.value,
    expiry: inputs.expiry.value,
    cvc: inputs.cvc.value,
    name: inputs.name.value,
  });

  function render(checks: FieldChecks): void {
    brandLabel.textContent = text.brands[checks.brand] ?? '';
    for (const field of inPlay) {
      const check = checks[field];
      if (check.error === undefined) shown.delete(field);
      const error: FieldErrorCode | undefined = shown.has(field) ? check.error : undefined;
      const refused = refusal?.field === field ? refusal.message : undefined;
      const input = inputs[field];
      const invalid = error !== undefined || refused !== undefined;
      input.setAttribute('aria-invalid', invalid ? 'true' : 'false');
      const message = error === undefined ? (refused ?? '') : text.errors[error];
      if (errorOf[field].textContent !== message) errorOf[field].textContent = message;
      hooks.styleInput?.(input, { focus: document.activeElement === input, invalid, complete: check.complete });
    }
    hooks.styleInput?.(inputs.name, {
      focus: document.activeElement === inputs.name,
      invalid: false,
      complete: inputs.name.value.trim() !== '',
    });
    inputs.cvc.maxLength = 4;
  }

  function update(): { payload: ChangeEventPayload; checks: FieldChecks } {
    const current = values();
    const checks = withAcceptedBrands(checkAll(current), accepted);
    // Known from the first digits and not the shopper's typo: said at once, not after blur (and
    // taken back at once when the shopper starts another card).
    if (checks.number.error === 'brand_not_accepted') {
      if (!shown.has('number')) shownForBrand = true;
      shown.add('number');
    } else if (shownForBrand) {
      shown.delete('number');
      shownForBrand = false;
    }
    render(checks);
    const payload = changePayload(checks, current, shown, inPlay, text.errors);
    hooks.onChecked?.(payload, checks);
    return { payload, checks };
  }

  /** Reformats while keeping the caret after the same number of digits. */
  function reformat(input: HTMLInputElement, format: (raw: string) => string): void {
    const caret = input.selectionStart ?? input.value.length;
    // Counted in the formatted text before the caret: a month completed with a leading zero ("1/" is
    // "01") puts the caret after the digit it added, not before it.
    const digitsBefore = digitsOf(format(input.value.slice(0, caret))).length;
    const formatted = format(input.value);
    if (formatted === input.value) return;
    input.value = formatted;
    let position = 0;
    for (let seen = 0; position < formatted.length && seen < digitsBefore; position++) if (/\d/.test(formatted[position] ?? '')) seen++;
    input.setSelectionRange(position, position);
  }

  inputs.number.addEventListener('input', () => reformat(inputs.number, formatCardNumber));
  inputs.expiry.addEventListener('input', () => reformat(inputs.expiry, formatExpiry));
  inputs.cvc.addEventListener('input', () => {
    const digits = digitsOf(inputs.cvc.value).slice(0, 4);
    if (digits !== inputs.cvc.value) inputs.cvc.value = digits;
  });
  for (const field of Object.keys(inputs) as FieldName[]) {
    const input = inputs[field];
    input.addEventListener('input', () => {
      refusal = undefined;
      update();
    });
    input.addEventListener('focus', () => {
      hooks.onFocus?.(field);
      update();
    });
    input.addEventListener('blur', () => {
      if (field !== 'name') {
        if (field === 'number') shownForBrand = false;
        if (input.value === '') shown.delete(field);
        else shown.add(field);
      }
      hooks.onBlur?.(field);
      update();
    });
  }

  return {
    inputs,
    values,
    update,
    showAll() {
      for (const field of inPlay) shown.add(field);
      shownForBrand = false;
      const { checks } = update();
      return inPlay.map((f) => checks[f].error).find((e) => e !== undefined);
    },
    only(fields) {
      inPlay = fields;
      for (const field of CARD_FIELDS) {
        byId(`${field}-field`).hidden = !fields.includes(field);
        if (!fields.includes(field)) errorOf[field].textContent = '';
      }
      update();
    },
    clear() {
      for (const input of Object.values(inputs)) input.value = '';
      shown.clear();
      shownForBrand = false;
      refusal = undefined;
      update();
    },
    acceptBrands(brands) {
      accepted = brands;
      update();
    },
    showRefusal(field, message) {
      refusal = { field, message };
      update();
    },
    setText(next) {
      text = next;
      update();
    },
  };
}

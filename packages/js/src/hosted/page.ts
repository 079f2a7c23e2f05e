/**
 * The hosted payment page's script (the gateway's /pay/{id} on the fields origin). The page is a
 * plain HTML form that posts the card to its own origin and works without script; this adds the
 * card fields' behaviour (same inputs, same rules, same messages: fields/cardInputs.ts) and stops
 * a submission the server would refuse anyway, showing why next to the field.
 */
import { byId, CARD_FIELDS, wireCardInputs } from '../fields/cardInputs';

const FIELD_INPUT: Record<(typeof CARD_FIELDS)[number], string> = { number: 'cc-number', expiry: 'cc-exp', cvc: 'cc-csc' };

function start(): void {
  const form = byId<HTMLFormElement>('card-form');
  const submit = byId<HTMLButtonElement>('pay-submit');
  const card = wireCardInputs();
  card.update();
  let submitting = false;
  form.addEventListener('submit', (event) => {
    if (submitting) return void event.preventDefault();
    const firstError = card.showAll();
    if (firstError !== undefined) {
      event.preventDefault();
      const { checks } = card.update();
      const field = CARD_FIELDS.find((f) => checks[f].error !== undefined);
      if (field !== undefined) byId(FIELD_INPUT[field]).focus();
      return;
    }
    // One submission: a double click must not post the card twice.
    submitting = true;
    submit.setAttribute('aria-disabled', 'true');
  });
}

start();

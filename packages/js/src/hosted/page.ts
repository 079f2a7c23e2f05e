/**
 * The hosted payment page's script (the gateway's /pay/{id} on the fields origin). The page is a
 * plain HTML form that posts the card to its own origin and works without script; this adds the
 * card fields' behaviour (same inputs, same rules, same messages: fields/cardInputs.ts) and stops
 * a submission the server would refuse anyway, showing why next to the field.
 */
import { byId, CARD_FIELDS, wireCardInputs } from '../fields/cardInputs';
import { isLocale, LOCALE_TEXTS } from '../shared/locale';
import { parseChallenge, solveChallenge } from '../shared/proofOfWork';

const FIELD_INPUT: Record<(typeof CARD_FIELDS)[number], string> = { number: 'cc-number', expiry: 'cc-exp', cvc: 'cc-csc' };

function start(): void {
  const form = byId<HTMLFormElement>('card-form');
  const submit = byId<HTMLButtonElement>('pay-submit');
  const card = wireCardInputs();
  // The card inputs' language (cardInputsMarkup's locale; the nearest lang, which may be a part of the page marked
  // apart): the messages shown as the shopper types are in the same one.
  const lang = byId('cc-number').closest<HTMLElement>('[lang]')?.lang ?? 'en';
  card.setText(LOCALE_TEXTS[isLocale(lang) ? lang : 'en']);
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
    // The merchant may be charging the card for a few seconds: say so, on the button and to screen readers.
    const busy = submit.dataset.busyLabel;
    if (busy !== undefined && busy !== '') {
      submit.textContent = busy;
      const status = document.getElementById('pay-status');
      if (status !== null) status.textContent = busy;
    }
    // First the proof of work the shop may need just now (card testing); the form is sent either way.
    event.preventDefault();
    void proofOfWork(form.getAttribute('action') ?? '').then((solution) => {
      if (solution !== undefined) byId<HTMLInputElement>('pay-challenge').value = solution;
      form.submit();
    });
  });
}

/**
 * The solution of this payment page's challenge when the shop is under card-testing pressure
 * (`required`), else undefined; never throws: without it the server asks again on the page.
 */
async function proofOfWork(action: string): Promise<string | undefined> {
  try {
    const response = await fetch(`${action}/challenge`, { credentials: 'omit', cache: 'no-store' });
    const challenge = response.ok ? parseChallenge(await response.json()) : undefined;
    return challenge?.required === true ? await solveChallenge(challenge) : undefined;
  } catch {
    return undefined;
  }
}

start();

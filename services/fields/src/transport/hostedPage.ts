import { formatAmount, type FormSessionDisplay, type PageLocale } from '@tessera/merchant-data';
import { escapeHtml } from '../domain/browserFields';
import { cardInputsMarkup, HOSTED_PAGE_CSS, pageOpening, type CardFieldsAssets } from './cardFieldsPage';

/** The page's own words in each locale it is written in (the merchant's texts are shown as given). */
interface PageText {
  title: string;
  total: string;
  pay: (amount: string | null) => string;
  /** The button while the card is being charged (a completion call can take seconds). */
  processing: string;
  testMode: string;
  enterCard: string;
  cancel: (shop: string | null) => string;
  returnTo: (shop: string | null) => string;
  secure: string;
}

const TEXT: Record<PageLocale, PageText> = {
  en: {
    title: 'Pay by card',
    total: 'Total',
    pay: (amount) => (amount === null ? 'Pay' : `Pay ${amount}`),
    processing: 'Processing payment…',
    testMode: 'Test mode: use a published test card.',
    enterCard: 'Enter your card details.',
    cancel: (shop) => (shop === null ? 'Cancel and return to the shop' : `Cancel and return to ${shop}`),
    returnTo: (shop) => `Return to ${shop ?? 'the shop'}`,
    secure: 'Your card details are sent to Tessera, the shop’s card vault, not to the shop.',
  },
  de: {
    title: 'Mit Karte bezahlen',
    total: 'Gesamtbetrag',
    pay: (amount) => (amount === null ? 'Bezahlen' : `${amount} bezahlen`),
    processing: 'Zahlung wird verarbeitet…',
    testMode: 'Testmodus: Verwenden Sie eine veröffentlichte Testkarte.',
    enterCard: 'Geben Sie Ihre Kartendaten ein.',
    cancel: (shop) => (shop === null ? 'Abbrechen und zurück zum Shop' : `Abbrechen und zurück zu ${shop}`),
    returnTo: (shop) => (shop === null ? 'Zurück zum Shop' : `Zurück zu ${shop}`),
    secure: 'Ihre Kartendaten gehen an Tessera, den Kartentresor des Shops, nicht an den Shop.',
  },
  fr: {
    title: 'Payer par carte',
    total: 'Total',
    pay: (amount) => (amount === null ? 'Payer' : `Payer ${amount}`),
    processing: 'Paiement en cours…',
    testMode: 'Mode test : utilisez une carte de test publiée.',
    enterCard: 'Saisissez les données de votre carte.',
    cancel: (shop) => (shop === null ? 'Annuler et revenir à la boutique' : `Annuler et revenir à ${shop}`),
    returnTo: (shop) => (shop === null ? 'Revenir à la boutique' : `Revenir à ${shop}`),
    secure: 'Les données de votre carte sont envoyées à Tessera, le coffre de cartes de la boutique, et non à la boutique.',
  },
  es: {
    title: 'Pagar con tarjeta',
    total: 'Total',
    pay: (amount) => (amount === null ? 'Pagar' : `Pagar ${amount}`),
    processing: 'Procesando el pago…',
    testMode: 'Modo de prueba: use una tarjeta de prueba publicada.',
    enterCard: 'Introduzca los datos de su tarjeta.',
    cancel: (shop) => (shop === null ? 'Cancelar y volver a la tienda' : `Cancelar y volver a ${shop}`),
    returnTo: (shop) => (shop === null ? 'Volver a la tienda' : `Volver a ${shop}`),
    secure: 'Los datos de su tarjeta se envían a Tessera, la bóveda de tarjetas de la tienda, no a la tienda.',
  },
  nl: {
    title: 'Betalen met kaart',
    total: 'Totaal',
    pay: (amount) => (amount === null ? 'Betalen' : `Betaal ${amount}`),
    processing: 'Betaling wordt verwerkt…',
    testMode: 'Testmodus: gebruik een gepubliceerde testkaart.',
    enterCard: 'Vul uw kaartgegevens in.',
    cancel: (shop) => (shop === null ? 'Annuleren en terug naar de winkel' : `Annuleren en terug naar ${shop}`),
    returnTo: (shop) => (shop === null ? 'Terug naar de winkel' : `Terug naar ${shop}`),
    secure: 'Uw kaartgegevens gaan naar Tessera, de kaartenkluis van de winkel, niet naar de winkel.',
  },
};

export interface HostedPageInput {
  sessionId: string;
  csrfToken: string;
  /** The session has a cancel URL: a Cancel button is shown. */
  cancelable: boolean;
  mode: 'test' | 'live';
  /** What the merchant's server put in the session: shown as given, escaped. */
  display: FormSessionDisplay;
  /** The amount to pay, when the session has one. */
  amount?: { minor: number; currency: string };
  /** Why the last submission was refused, or the merchant's decline (never the card data). */
  errorMessage?: string;
}

/**
 * The merchant's name and logo. The logo is the only thing the page loads from elsewhere: its
 * origin alone is allowed by the CSP (img-src), and it is fetched without a Referer (the page
 * URL names the session). With the name beside it, the logo is decoration (alt="").
 */
function merchantHeader(display: FormSessionDisplay): string {
  if (display.merchantName === null && display.logoUrl === null) return '';
  const logo =
    display.logoUrl === null
      ? ''
      : `<img class="logo" src="${escapeHtml(display.logoUrl)}" alt="${display.merchantName === null ? 'Shop logo' : ''}" referrerpolicy="no-referrer">`;
  const name = display.merchantName === null ? '' : `<p class="merchant-name">${escapeHtml(display.merchantName)}</p>`;
  return `<header class="merchant">${logo}${name}</header>\n`;
}

/**
 * The hosted payment page: a full page (never framed) whose form posts the card to this origin
 * only, with the session's CSRF token. The same card inputs as the iframe; without script the
 * form still works (the server applies the same rules and shows the refusal here). The merchant's
 * name, logo, amount and button text come from the session, which the merchant's server signed in.
 */
export function renderHostedPage(assets: CardFieldsAssets, input: HostedPageInput): string {
  const locale = input.display.locale;
  const text = TEXT[locale];
  const action = `/pay/${escapeHtml(input.sessionId)}`;
  const csrf = escapeHtml(input.csrfToken);
  const amount = input.amount === undefined ? null : formatAmount(input.amount.minor, input.amount.currency, locale);
  const alert =
    input.errorMessage === undefined ? '' : `<p class="alert" role="alert" id="form-error">${escapeHtml(input.errorMessage)}</p>\n`;
  const cancel = input.cancelable
    ? `<form class="cancel" method="post" action="${action}/cancel">
<input type="hidden" name="csrf" value="${csrf}">
<button type="submit" class="link" id="pay-cancel">${escapeHtml(text.cancel(input.display.merchantName))}</button>
</form>
`
    : '';
  const cardInputs = cardInputsMarkup({ showName: true }, locale);
  const total =
    amount === null
      ? ''
      : `<p class="amount" id="pay-amount"><span class="visually-hidden">${text.total}: </span>${escapeHtml(amount)}</p>\n`;
  return `${pageOpening(text.title, HOSTED_PAGE_CSS, locale)}
<body>
<main>
${merchantHeader(input.display)}<h1>${text.title}</h1>
${total}<p class="sub">${input.mode === 'test' ? text.testMode : text.enterCard}</p>
${alert}<form id="card-form" method="post" action="${action}" novalidate autocomplete="on">
<input type="hidden" name="csrf" value="${csrf}">
<input type="hidden" name="challenge" id="pay-challenge" value="">
${cardInputs}
<button type="submit" class="pay" id="pay-submit" data-busy-label="${text.processing}">${escapeHtml(input.display.submitLabel ?? text.pay(amount))}</button>
<p class="visually-hidden" role="status" id="pay-status"></p>
</form>
${cancel}<p class="secure">${text.secure}</p>
</main>
<script>${assets.hostedJs}</script>
</body>
</html>
`;
}

/** Where a notice page may send the shopper back to: the session's cancel (or return) URL, unsigned. */
export interface NoticeLink {
  url: string;
  merchantName: string | null;
  locale: PageLocale;
}

/**
 * The page for a session that cannot be used (unknown, expired, already used): what happened and
 * what to do, with a plain link back to the shop when the session names one.
 */
export function renderHostedNotice(title: string, message: string, link?: NoticeLink): string {
  const back =
    link === undefined
      ? ''
      : // The notice itself is in English (the catalogue's words); the link in the page's language, marked so (WCAG 3.1.2).
        `<p class="back" lang="${link.locale}"><a href="${escapeHtml(link.url)}" id="return-link">${escapeHtml(TEXT[link.locale].returnTo(link.merchantName))}</a></p>`;
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${HOSTED_PAGE_CSS}</style></head>
<body><main><h1>${escapeHtml(title)}</h1><p class="notice" role="alert">${escapeHtml(message)}</p>${back}</main></body>
</html>
`;
}

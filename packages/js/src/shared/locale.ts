/**
 * Every text the card fields show or announce, one table per language: labels, placeholders, the
 * card brand, the error messages (the same codes as the change events), and the messages a
 * tokenize() rejection carries. The iframe picks a table by the merchant's `locale` option ('auto':
 * the shopper's browser language), and the fields service renders the same table into the markup
 * (cardInputsMarkup), so the hosted page and the iframe say the same thing in the same words.
 *
 * Plain strings only: they are set with textContent or as attribute values, never as HTML.
 */
import type { CardBrand, FieldErrorCode, FieldName } from './protocol';

export const LOCALES = ['en', 'de', 'fr', 'es', 'nl'] as const;
export type Locale = (typeof LOCALES)[number];
/** 'auto': the language the shopper's browser asks for, if it is one of LOCALES, else English. */
export type LocaleOption = Locale | 'auto';

export interface FieldsText {
  labels: Record<FieldName, string>;
  /** '' for no placeholder. */
  placeholders: Record<FieldName, string>;
  errors: Record<FieldErrorCode, string>;
  /** What the number input announces as the detected brand ('' while unknown). */
  brands: Record<CardBrand, string>;
  /** The form's heading (visually hidden): what a screen reader names the iframe's content. */
  formTitle: string;
  /** The iframe's title attribute on the merchant's page, unless the merchant sets `title`. */
  frameTitle: string;
  /** Shown when the fields page is opened outside a merchant's page. */
  standalone: string;
  tokenizeInProgress: string;
  networkError: string;
  /** The API's refusals of a card that the fields show in their own words (fields/page.ts). */
  refusals: Record<'live_card_in_test_mode' | 'test_card_in_live_mode' | 'rate_limited', string>;
}

/** Brand names are names: the same in every language here. */
const BRANDS: Record<CardBrand, string> = {
  visa: 'Visa',
  mastercard: 'Mastercard',
  amex: 'American Express',
  discover: 'Discover',
  diners: 'Diners Club',
  jcb: 'JCB',
  unionpay: 'UnionPay',
  maestro: 'Maestro',
  unknown: '',
};

const EN: FieldsText = {
  labels: { number: 'Card number', expiry: 'Expiry date (MM / YY)', cvc: 'Security code', name: 'Name on card' },
  placeholders: { number: '1234 1234 1234 1234', expiry: 'MM / YY', cvc: 'CVC', name: '' },
  errors: {
    incomplete_number: 'Your card number is incomplete.',
    invalid_number: 'Your card number is invalid.',
    incomplete_expiry: 'Your card’s expiration date is incomplete.',
    invalid_expiry: 'Your card’s expiration date is invalid.',
    expired_card: 'Your card’s expiration date is in the past.',
    incomplete_cvc: 'Your card’s security code is incomplete.',
    invalid_cvc: 'Your card’s security code is invalid.',
    brand_not_accepted: 'This card brand is not accepted here. Please use another card.',
  },
  brands: BRANDS,
  formTitle: 'Card details',
  frameTitle: 'Secure card payment input frame',
  standalone: 'These card fields work only inside a merchant’s checkout page.',
  tokenizeInProgress: 'A tokenization is already in progress.',
  networkError: 'The card could not be sent. Check the connection and try again.',
  refusals: {
    live_card_in_test_mode: 'This is a real card, but this checkout is in test mode: use a test card.',
    test_card_in_live_mode: 'This is a test card: please use a real card.',
    rate_limited: 'Too many attempts just now. Please wait a moment and try again.',
  },
};

const DE: FieldsText = {
  labels: { number: 'Kartennummer', expiry: 'Ablaufdatum (MM / JJ)', cvc: 'Sicherheitscode', name: 'Name auf der Karte' },
  placeholders: { number: '1234 1234 1234 1234', expiry: 'MM / JJ', cvc: 'CVC', name: '' },
  errors: {
    incomplete_number: 'Ihre Kartennummer ist unvollständig.',
    invalid_number: 'Ihre Kartennummer ist ungültig.',
    incomplete_expiry: 'Das Ablaufdatum Ihrer Karte ist unvollständig.',
    invalid_expiry: 'Das Ablaufdatum Ihrer Karte ist ungültig.',
    expired_card: 'Das Ablaufdatum Ihrer Karte liegt in der Vergangenheit.',
    incomplete_cvc: 'Der Sicherheitscode Ihrer Karte ist unvollständig.',
    invalid_cvc: 'Der Sicherheitscode Ihrer Karte ist ungültig.',
    brand_not_accepted: 'Diese Kartenmarke wird hier nicht akzeptiert. Bitte verwenden Sie eine andere Karte.',
  },
  brands: BRANDS,
  formTitle: 'Kartendaten',
  frameTitle: 'Sicheres Eingabefeld für Kartenzahlungen',
  standalone: 'Diese Kartenfelder funktionieren nur auf der Bezahlseite eines Händlers.',
  tokenizeInProgress: 'Die Karte wird bereits übermittelt.',
  networkError: 'Die Karte konnte nicht gesendet werden. Prüfen Sie die Verbindung und versuchen Sie es erneut.',
  refusals: {
    live_card_in_test_mode: 'Dies ist eine echte Karte, aber diese Kasse ist im Testmodus: Verwenden Sie eine Testkarte.',
    test_card_in_live_mode: 'Dies ist eine Testkarte: Bitte verwenden Sie eine echte Karte.',
    rate_limited: 'Gerade gab es zu viele Versuche. Bitte warten Sie einen Moment und versuchen Sie es erneut.',
  },
};

const FR: FieldsText = {
  labels: { number: 'Numéro de carte', expiry: 'Date d’expiration (MM / AA)', cvc: 'Code de sécurité', name: 'Nom sur la carte' },
  placeholders: { number: '1234 1234 1234 1234', expiry: 'MM / AA', cvc: 'CVC', name: '' },
  errors: {
    incomplete_number: 'Le numéro de votre carte est incomplet.',
    invalid_number: 'Le numéro de votre carte est invalide.',
    incomplete_expiry: 'La date d’expiration de votre carte est incomplète.',
    invalid_expiry: 'La date d’expiration de votre carte est invalide.',
    expired_card: 'La date d’expiration de votre carte est dépassée.',
    incomplete_cvc: 'Le code de sécurité de votre carte est incomplet.',
    invalid_cvc: 'Le code de sécurité de votre carte est invalide.',
    brand_not_accepted: 'Cette marque de carte n’est pas acceptée ici. Veuillez utiliser une autre carte.',
  },
  brands: BRANDS,
  formTitle: 'Données de la carte',
  frameTitle: 'Champ sécurisé de saisie de carte de paiement',
  standalone: 'Ces champs de carte ne fonctionnent que dans la page de paiement d’un marchand.',
  tokenizeInProgress: 'La carte est déjà en cours d’envoi.',
  networkError: 'La carte n’a pas pu être envoyée. Vérifiez la connexion et réessayez.',
  refusals: {
    live_card_in_test_mode: 'Cette carte est réelle, mais ce paiement est en mode test : utilisez une carte de test.',
    test_card_in_live_mode: 'Il s’agit d’une carte de test : veuillez utiliser une vraie carte.',
    rate_limited: 'Trop de tentatives pour le moment. Patientez un instant et réessayez.',
  },
};

const ES: FieldsText = {
  labels: { number: 'Número de tarjeta', expiry: 'Fecha de caducidad (MM / AA)', cvc: 'Código de seguridad', name: 'Nombre en la tarjeta' },
  placeholders: { number: '1234 1234 1234 1234', expiry: 'MM / AA', cvc: 'CVC', name: '' },
  errors: {
    incomplete_number: 'El número de tu tarjeta está incompleto.',
    invalid_number: 'El número de tu tarjeta no es válido.',
    incomplete_expiry: 'La fecha de caducidad de tu tarjeta está incompleta.',
    invalid_expiry: 'La fecha de caducidad de tu tarjeta no es válida.',
    expired_card: 'La fecha de caducidad de tu tarjeta ya ha pasado.',
    incomplete_cvc: 'El código de seguridad de tu tarjeta está incompleto.',
    invalid_cvc: 'El código de seguridad de tu tarjeta no es válido.',
    brand_not_accepted: 'Esta marca de tarjeta no se acepta aquí. Usa otra tarjeta.',
  },
  brands: BRANDS,
  formTitle: 'Datos de la tarjeta',
  frameTitle: 'Campo seguro para introducir la tarjeta de pago',
  standalone: 'Estos campos de tarjeta solo funcionan dentro de la página de pago de un comercio.',
  tokenizeInProgress: 'La tarjeta ya se está enviando.',
  networkError: 'No se ha podido enviar la tarjeta. Comprueba la conexión y vuelve a intentarlo.',
  refusals: {
    live_card_in_test_mode: 'Es una tarjeta real, pero este pago está en modo de prueba: usa una tarjeta de prueba.',
    test_card_in_live_mode: 'Es una tarjeta de prueba: usa una tarjeta real.',
    rate_limited: 'Demasiados intentos en este momento. Espera un momento y vuelve a intentarlo.',
  },
};

const NL: FieldsText = {
  labels: { number: 'Kaartnummer', expiry: 'Vervaldatum (MM / JJ)', cvc: 'Beveiligingscode', name: 'Naam op de kaart' },
  placeholders: { number: '1234 1234 1234 1234', expiry: 'MM / JJ', cvc: 'CVC', name: '' },
  errors: {
    incomplete_number: 'Uw kaartnummer is onvolledig.',
    invalid_number: 'Uw kaartnummer is ongeldig.',
    incomplete_expiry: 'De vervaldatum van uw kaart is onvolledig.',
    invalid_expiry: 'De vervaldatum van uw kaart is ongeldig.',
    expired_card: 'De vervaldatum van uw kaart ligt in het verleden.',
    incomplete_cvc: 'De beveiligingscode van uw kaart is onvolledig.',
    invalid_cvc: 'De beveiligingscode van uw kaart is ongeldig.',
    brand_not_accepted: 'Dit kaartmerk wordt hier niet geaccepteerd. Gebruik een andere kaart.',
  },
  brands: BRANDS,
  formTitle: 'Kaartgegevens',
  frameTitle: 'Beveiligd invoerveld voor kaartbetalingen',
  standalone: 'Deze kaartvelden werken alleen op de betaalpagina van een winkel.',
  tokenizeInProgress: 'De kaart wordt al verzonden.',
  networkError: 'De kaart kon niet worden verzonden. Controleer de verbinding en probeer het opnieuw.',
  refusals: {
    live_card_in_test_mode: 'Dit is een echte kaart, maar deze kassa staat in testmodus: gebruik een testkaart.',
    test_card_in_live_mode: 'Dit is een testkaart: gebruik een echte kaart.',
    rate_limited: 'Te veel pogingen op dit moment. Wacht even en probeer het opnieuw.',
  },
};

export const LOCALE_TEXTS: Readonly<Record<Locale, FieldsText>> = { en: EN, de: DE, fr: FR, es: ES, nl: NL };

export function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
}

export function isLocaleOption(value: unknown): value is LocaleOption {
  return value === 'auto' || isLocale(value);
}

/**
 * The table to use: the merchant's locale, or for 'auto' the first of the browser's languages
 * (`navigator.languages`, most preferred first) that we have, by its primary subtag (`de-AT` is
 * German); English when none is.
 */
export function resolveLocale(option: LocaleOption | undefined, browserLanguages: readonly string[] = []): Locale {
  if (option !== undefined && option !== 'auto') return option;
  if (option === undefined) return 'en';
  for (const tag of browserLanguages) {
    const primary = tag.split('-')[0]?.toLowerCase();
    if (isLocale(primary)) return primary;
  }
  return 'en';
}

/**
 * The currencies a form session may charge in: ISO 4217 codes in lower case (as PSPs take them),
 * each with its minor-unit exponent, so an amount in minor units is shown right (`1234` is €12.34,
 * ¥1,234 and 1.234 BHD). Funds, precious metals and testing codes are left out: no shopper pays in them.
 */

/** Currencies whose minor unit is not a hundredth (ISO 4217 "minor unit" column). */
const EXPONENT_EXCEPTIONS: Record<string, number> = {
  bif: 0,
  clp: 0,
  djf: 0,
  gnf: 0,
  isk: 0,
  jpy: 0,
  kmf: 0,
  krw: 0,
  pyg: 0,
  rwf: 0,
  ugx: 0,
  vnd: 0,
  vuv: 0,
  xaf: 0,
  xof: 0,
  xpf: 0,
  bhd: 3,
  iqd: 3,
  jod: 3,
  kwd: 3,
  lyd: 3,
  omr: 3,
  tnd: 3,
};

/** ISO 4217 active currency codes (2024 list), lower case. */
const CODES = `aed afn all amd ang aoa ars aud awg azn bam bbd bdt bgn bhd bif bmd bnd bob brl bsd btn bwp byn bzd cad cdf chf clp
cny cop crc cuc cup cve czk djf dkk dop dzd egp ern etb eur fjd fkp gbp gel ghs gip gmd gnf gtq gyd hkd hnl htg huf idr ils inr
iqd irr isk jmd jod jpy kes kgs khr kmf kpw krw kwd kyd kzt lak lbp lkr lrd lsl lyd mad mdl mga mkd mmk mnt mop mru mur mvr mwk
mxn myr mzn nad ngn nio nok npr nzd omr pab pen pgk php pkr pln pyg qar ron rsd rub rwf sar sbd scr sdg sek sgd shp sle sll sos
srd ssp stn svc syp szl thb tjs tmt tnd top try ttd twd tzs uah ugx usd uyu uzs ved ves vnd vuv wst xaf xcd xcg xof xpf yer zar
zmw zwg zwl`
  .split(/\s+/)
  .filter((code) => code !== '');

export const CURRENCIES: ReadonlySet<string> = new Set(CODES);

export function isCurrency(code: string): boolean {
  return CURRENCIES.has(code);
}

/** Digits after the decimal point of `currency`'s minor unit (2 unless ISO 4217 says otherwise). */
export function minorUnitExponent(currency: string): number {
  return EXPONENT_EXCEPTIONS[currency] ?? 2;
}

/** The locales the hosted payment page is written in. */
export const PAGE_LOCALES = ['en', 'de', 'fr', 'es', 'nl'] as const;
export type PageLocale = (typeof PAGE_LOCALES)[number];

/**
 * An amount in minor units as a shopper of `locale` reads it: `formatAmount(1234, 'eur', 'de')` is
 * "12,34 €". The exponent comes from our table, not the runtime's, so the amount the merchant meant
 * is never rounded by a different idea of the currency's decimals.
 */
export function formatAmount(amount: number, currency: string, locale: PageLocale): string {
  const exponent = minorUnitExponent(currency);
  return new Intl.NumberFormat(locale, {
    style: 'currency',
    currency: currency.toUpperCase(),
    minimumFractionDigits: exponent,
    maximumFractionDigits: exponent,
  }).format(amount / 10 ** exponent);
}

/**
 * What a merchant's payment page (the page that embeds the card fields) should send, so that only
 * scripts it authorized run there and Tessera hears of any other (PCI DSS 4.0.1 6.4.3 and 11.6.1;
 * FAQ 1588: a page embedding a payment iframe must still protect itself against script attacks).
 * Plain text the dashboard and `npm run keys -- page-policy` print; the merchant's server fills
 * in a fresh nonce per response.
 */

/** Where a fresh, unguessable nonce per response goes (base64 of at least 128 random bits). */
export const NONCE_PLACEHOLDER = '{NONCE}';
/** The endpoint name in Reporting-Endpoints and the policy's report-to. */
export const REPORTING_GROUP = 'tessera-csp';

export interface PagePolicyInput {
  /** FIELDS_ORIGIN: where tessera.js and the card fields are served. */
  fieldsOrigin: string;
  /** The SRI hash of tessera.js (packages/js/dist/browser/manifest.json); undefined: not built here. */
  tesseraJsIntegrity: string | undefined;
  /** The publishable key to name in the report URL, or a placeholder such as `tpk_test_…`. */
  publishableKey: string;
}

export interface PagePolicy {
  fieldsOrigin: string;
  /** Response headers of the payment page, by name. */
  headers: Record<string, string>;
  /** The line that loads tessera.js. */
  scriptTag: string;
  /** Where violation reports go (report-uri and Reporting-Endpoints). */
  reportUrl: string;
  notes: string[];
}

export function recommendedPagePolicy(input: PagePolicyInput): PagePolicy {
  const fields = input.fieldsOrigin;
  const reportUrl = `${fields}/v1/browser/csp-reports?key=${input.publishableKey}`;
  const csp = [
    "default-src 'self'",
    `script-src 'nonce-${NONCE_PLACEHOLDER}' ${fields}`,
    `frame-src ${fields}`,
    `connect-src 'self' ${fields}`,
    "img-src 'self' data:",
    "style-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    `report-uri ${reportUrl}`,
    `report-to ${REPORTING_GROUP}`,
  ].join('; ');
  const integrity = input.tesseraJsIntegrity ?? 'sha384-(run npm run build: packages/js/dist/browser/manifest.json)';
  return {
    fieldsOrigin: fields,
    headers: {
      'Content-Security-Policy': csp,
      'Reporting-Endpoints': `${REPORTING_GROUP}="${reportUrl}"`,
      'Referrer-Policy': 'strict-origin-when-cross-origin',
      'X-Content-Type-Options': 'nosniff',
    },
    scriptTag: `<script src="${fields}/js/v1/tessera.js" integrity="${integrity}" crossorigin="anonymous" nonce="${NONCE_PLACEHOLDER}"></script>`,
    reportUrl,
    notes: [
      `Replace ${NONCE_PLACEHOLDER} with a new random value (16 bytes or more, base64) on every response, in the header and on each <script> you authorize.`,
      "Add the origins of your own authorized scripts to script-src, or give them the nonce; never add 'unsafe-inline' or a wildcard.",
      'Start with Content-Security-Policy-Report-Only to see what would be blocked, then switch to Content-Security-Policy.',
      'tessera.js reports the scripts it sees on the page to the dashboard (Payment pages); authorize each with a justification (PCI DSS 6.4.3).',
      'Reporting-Endpoints needs HTTPS (or a loopback address) for the report URL; report-uri covers browsers without the Reporting API.',
    ],
  };
}

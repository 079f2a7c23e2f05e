import type { ConfigDocs } from '@tessera/common';

/** docs/configuration.md's text for the fields service's own variables (shared ones: @tessera/common's sharedConfigDocs). */
export const fieldsConfigDocs: ConfigDocs = {
  FIELDS_PORT: {
    text: 'HTTP port of the card fields, `tessera.js`, the hosted payment page and the browser routes ([browser.md](browser.md))',
  },
  FIELDS_BIND: { text: 'HTTP bind address (`0.0.0.0` in containers)' },
  COMPLETION_TIMEOUT_MS: {
    text: "how long a merchant's completion endpoint has to answer the hosted payment page's completion call (at most the proxy's `PSP_TIMEOUT_MS`); past it the payment's outcome is unknown: the session is completed with `payment.status: unknown` and takes no further card ([api.md](api.md#the-completion-call))",
  },
  PAGE_REPORTS_PER_KEY_PER_SECOND: {
    text: "page reports (`POST /v1/browser/page-reports`, sent by `tessera.js` from the merchant's payment page) and CSP violation reports (`POST /v1/browser/csp-reports`) per publishable key per second, together; past it `429 rate_limited` and the report is dropped. `0` disables ([browser.md](browser.md#saq-a-kit-your-payment-pages-scripts-and-headers))",
  },
  BROWSER_TOKENS_PER_KEY_PER_MINUTE: {
    text: "card-testing threshold of `POST /v1/browser/tokens` and the hosted page's `POST /pay/{id}`: tokenizations per publishable key (hosted page: per secret key that opened the form session) per minute past which every card needs a solved proof-of-work challenge (`429 challenge_required` without one); nobody is refused for the key's volume alone. `0` disables ([browser.md](browser.md#card-testing))",
  },
  BROWSER_CHALLENGE_BASE_NUMBER: {
    text: "a challenge's `maxnumber` (expected work: half as many SHA-256 hashes) at the threshold; times the key's recent volume in thresholds, doubled per card-testing refusal of the asking address in the hour. At most `BROWSER_CHALLENGE_MAX_NUMBER`",
  },
  BROWSER_CHALLENGE_MAX_NUMBER: {
    text: "the ceiling of a challenge's `maxnumber`, so a shopper's solve stays bounded however hard the attack",
  },
  BROWSER_CHALLENGE_TTL_SECONDS: { text: 'how long a challenge can be solved and spent (each solution once)' },
  BROWSER_ATTACK_COOLDOWN_SECONDS: {
    text: 'once a key reaches its threshold it counts as under attack this long: challenges stay on, the dashboard shows a banner',
  },
  BROWSER_TOKEN_TTL_UNDER_ATTACK_SECONDS: {
    text: "a provisional token made while its key is under attack is deleted this long after it was made unless retained (when shorter than the vault's `BROWSER_TOKEN_TTL_SECONDS`)",
  },
  BROWSER_CHALLENGE_HMAC_KEY: {
    default: 'derived from `API_KEY_PEPPER`',
    text: 'the HMAC key the challenges are signed with (at least 32 characters); every fields replica must share it',
  },
  BROWSER_TOKENS_PER_IP_PER_MINUTE: {
    text: "card-testing limit on `POST /v1/browser/tokens` and the hosted page's `POST /pay/{id}`, together: tokenizations per shopper IP (IPv6: per /64) per minute; above it `429 rate_limited` with `Retry-After`. `0` disables",
  },
  BROWSER_DISTINCT_CARDS_PER_IP_PER_HOUR: {
    text: 'different cards one shopper IP (IPv6: per /64) may tokenize in the browser (card fields and hosted page together) per hour; the same card again always passes. Cards are counted as keyed hashes, never stored. `0` disables',
  },
};

import fs from 'node:fs';
import path from 'node:path';
import { LOCALE_TEXTS, type Locale } from '@tessera/js/locale';
import { cspHashSource, escapeHtml, type FieldsRefusal } from '../domain/browserFields';
import { FONT_FACES_CSS } from './fieldsFonts';

/** Built by `npm run build` (packages/js/scripts/build-browser.mjs). */
export const BROWSER_ASSETS_DIR = path.resolve(__dirname, '../../../../packages/js/dist/browser');

/**
 * Shared by the fields page, its refusal pages and the hosted page; inline, allowed by its hash. The
 * merchant's appearance (packages/js shared/appearance.ts) sets the `--tc-*` custom properties on
 * the root; each fallback is the built-in look, which is what shows without an appearance. The
 * served fonts' @font-face rules are the fields page's alone (FIELDS_PAGE_CSS): only its CSP allows
 * fonts, and a page whose CSP refuses them would only log the refusals.
 */
const CSS = `
*,*::before,*::after{box-sizing:border-box}
html,body{margin:0;padding:0;background:var(--tc-bg,transparent)}
body{font-family:var(--tc-font,system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif);font-size:var(--tc-font-size,16px);line-height:var(--tc-line-height,1.4);color:var(--tc-input-text,#1a1a1a)}
form{display:grid;gap:var(--tc-gap,10px);padding:3px}
.field{display:flex;flex-direction:column;gap:var(--tc-label-gap,4px);min-width:0}
.split{display:grid;grid-template-columns:1fr 1fr;gap:var(--tc-gap,10px);align-items:end}
label{font-size:var(--tc-font-size-sm,14px);font-weight:var(--tc-label-weight,600);color:var(--tc-label,#333)}
.wrap{position:relative}
input{width:100%;font:inherit;padding:var(--tc-pad-y,10px) var(--tc-pad-x,12px);border:var(--tc-border-width,1px) solid var(--tc-border,#767676);border-radius:var(--tc-radius,6px);background:var(--tc-input-bg,#fff);color:var(--tc-input-text,#1a1a1a)}
input::placeholder{color:var(--tc-placeholder,#757575);opacity:1}
input:focus{outline:2px solid var(--tc-primary,#0b5fff);outline-offset:1px}
input[aria-invalid="true"]{border-color:var(--tc-danger,#b00020)}
#cc-number{padding-right:9em}
.brand{position:absolute;right:var(--tc-pad-x,12px);top:50%;transform:translateY(-50%);font-size:13px;color:var(--tc-secondary,#4d4d4d);pointer-events:none}
.errors p{margin:0;color:var(--tc-danger,#b00020);font-size:var(--tc-font-size-sm,14px)}
.errors p:empty{display:none}
.notice{margin:0;padding:8px;font-size:14px;color:#333}
[hidden]{display:none!important}
.visually-hidden{position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
`.trim();

/** The card-fields iframe's style: the served fonts' faces (its CSP alone allows fonts, from its own origin) and CSS. */
const FIELDS_PAGE_CSS = `${FONT_FACES_CSS}\n${CSS}`;

/** The hosted payment page: the fields' CSS plus a full page's layout, a button and a notice. */
export const HOSTED_PAGE_CSS = `${CSS}
html,body{background:#f6f7f9}
main{max-width:440px;margin:32px auto;padding:24px;background:#fff;border:1px solid #d6d9de;border-radius:10px}
h1{font-size:20px;margin:0 0 4px}
.sub{margin:0 0 16px;color:#4d4d4d;font-size:14px}
.alert{margin:0 0 12px;padding:10px 12px;border:1px solid #b00020;border-radius:6px;color:#b00020;background:#fff5f6}
.pay{width:100%;margin-top:6px;font:inherit;font-weight:600;padding:12px;border:0;border-radius:6px;background:#0b5fff;color:#fff;cursor:pointer}
.pay:focus{outline:2px solid #1a1a1a;outline-offset:2px}
.link{background:none;border:0;padding:0;font:inherit;font-size:14px;color:#0b4fd6;text-decoration:underline;cursor:pointer}
.cancel{margin:12px 0 0;text-align:center}
.secure{margin:16px 0 0;font-size:13px;color:#4d4d4d;text-align:center}
.merchant{display:flex;align-items:center;gap:12px;margin:0 0 16px}
.logo{max-height:40px;max-width:160px;object-fit:contain}
.merchant-name{margin:0;font-weight:600}
.amount{margin:0 0 4px;font-size:28px;font-weight:700}
.back{margin:16px 0 0}
.back a{color:#0b4fd6}`;

export interface CardFieldsAssets {
  /** tessera.js, served to merchant pages. */
  tesseraJs: Buffer;
  /** The SRI hash of tessera.js (`sha384-…`), as published in docs/browser.md. */
  tesseraJsIntegrity: string;
  /** The iframe's script, inlined into the page. */
  fieldsJs: string;
  scriptHash: string;
  styleHash: string;
  /** The card-fields page's style (CSS with the served fonts' @font-face rules). */
  fieldsStyleHash: string;
  /** The hosted payment page's script (the same input code as the fields), inlined; and its hashes. */
  hostedJs: string;
  hostedScriptHash: string;
  hostedStyleHash: string;
}

/**
 * Reads the built browser scripts once, at start-up: a fields service without them cannot serve the card
 * fields and says so, rather than failing on the first shopper.
 */
export function loadCardFieldsAssets(dir: string = BROWSER_ASSETS_DIR): CardFieldsAssets {
  const read = (name: string): Buffer => {
    try {
      return fs.readFileSync(path.join(dir, name));
    } catch (err) {
      throw new Error(`the card fields need ${path.join(dir, name)}: run npm run build (${(err as Error).message})`);
    }
  };
  const fieldsJs = read('fields.js').toString('utf8');
  const hostedJs = read('hosted.js').toString('utf8');
  // Inlined into HTML: these would end the script element early.
  for (const [name, script] of [
    ['fields.js', fieldsJs],
    ['hosted.js', hostedJs],
  ] as const) {
    if (/<\/script|<!--/i.test(script)) throw new Error(`${name} cannot be inlined: it contains </script or <!--`);
  }
  const manifest = JSON.parse(read('manifest.json').toString('utf8')) as Record<string, { integrity?: string }>;
  return {
    tesseraJs: read('tessera.js'),
    tesseraJsIntegrity: manifest['tessera.js']?.integrity ?? '',
    fieldsJs,
    scriptHash: cspHashSource(fieldsJs),
    styleHash: cspHashSource(CSS),
    fieldsStyleHash: cspHashSource(FIELDS_PAGE_CSS),
    hostedJs,
    hostedScriptHash: cspHashSource(hostedJs),
    hostedStyleHash: cspHashSource(HOSTED_PAGE_CSS),
  };
}

/**
 * A fields-origin page up to its </head>: never indexed, laid out for phones, its style inline
 * (the CSP allows that style by hash, so `css` must be the one hashed in CardFieldsAssets).
 */
export function pageOpening(title: string, css: string, locale: Locale = 'en'): string {
  return `<!doctype html>
<html lang="${locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>${css}</style>
</head>`;
}

/**
 * The card form inside the iframe: one frame, so browser autofill fills number, expiry, CVC and
 * name together. Every input has a label and an error element tied to it by aria-describedby;
 * the errors sit in an aria-live region, so they are read out when they appear (after blur).
 * Its <main> is named after the heading: the merchant's page has an unnamed <main> of its own, and
 * two unnamed ones fail axe's landmark-unique on that page (the frame's document still needs one).
 */
export function renderCardFieldsPage(assets: CardFieldsAssets, locale: Locale = 'en'): string {
  const text = LOCALE_TEXTS[locale];
  return `${pageOpening(text.formTitle, FIELDS_PAGE_CSS, locale)}
<body>
<main aria-labelledby="fields-title">
<h1 class="visually-hidden" id="fields-title">${escapeHtml(text.formTitle)}</h1>
<form id="card-form" novalidate autocomplete="on">
${cardInputsMarkup({ showName: false }, locale)}
</form>
<p class="notice" id="standalone" hidden>${escapeHtml(text.standalone)}</p>
</main>
<script>${assets.fieldsJs}</script>
</body>
</html>
`;
}

/**
 * The card inputs, their labels and their error elements: one markup for the card-fields iframe
 * and the hosted payment page, driven by the same script code (packages/js fields/cardInputs.ts).
 * The `name`s are what the hosted page's form posts. Labels and placeholders in `locale` (the
 * iframe sets the merchant's own after the handshake).
 */
export function cardInputsMarkup(options: { showName: boolean }, locale: Locale = 'en'): string {
  const { labels, placeholders } = LOCALE_TEXTS[locale];
  const text = (value: string): string => escapeHtml(value);
  const placeholder = (value: string): string => (value === '' ? '' : ` placeholder="${escapeHtml(value)}"`);
  return `<div class="field" id="number-field">
<label for="cc-number">${text(labels.number)}</label>
<div class="wrap">
<input id="cc-number" name="cardnumber" type="text" autocomplete="cc-number" inputmode="numeric" autocorrect="off" spellcheck="false" maxlength="23"${placeholder(placeholders.number)} aria-invalid="false" aria-describedby="cc-brand cc-number-error">
<span class="brand" id="cc-brand"></span>
</div>
</div>
<div class="split">
<div class="field" id="expiry-field">
<label for="cc-exp">${text(labels.expiry)}</label>
<input id="cc-exp" name="exp-date" type="text" autocomplete="cc-exp" inputmode="numeric" autocorrect="off" spellcheck="false" maxlength="9"${placeholder(placeholders.expiry)} aria-invalid="false" aria-describedby="cc-exp-error">
</div>
<div class="field" id="cvc-field">
<label for="cc-csc">${text(labels.cvc)}</label>
<input id="cc-csc" name="cvc" type="text" autocomplete="cc-csc" inputmode="numeric" autocorrect="off" spellcheck="false" maxlength="4"${placeholder(placeholders.cvc)} aria-invalid="false" aria-describedby="cc-csc-error">
</div>
</div>
<div class="field" id="name-row"${options.showName ? '' : ' hidden'}>
<label for="cc-name">${text(labels.name)}</label>
<input id="cc-name" name="ccname" type="text" autocomplete="cc-name" autocapitalize="words" spellcheck="false" maxlength="200"${placeholder(placeholders.name)} aria-describedby="cc-name-error">
</div>
<div class="errors" id="card-errors" aria-live="polite">
<p id="cc-number-error"></p>
<p id="cc-exp-error"></p>
<p id="cc-csc-error"></p>
<p id="cc-name-error"></p>
</div>`;
}

/**
 * The refusal page's one script: tells the framing page (tessera.js, which checks that the message
 * comes from its own iframe's window on the fields origin and carries its nonce) why there are no
 * fields, as packages/js protocol.ts RefusedMessage (protocol version 1). The code is read from the
 * page, so one script, and one CSP hash, serves every refusal. Sent to any origin: it holds nothing
 * but that code and the nonce the page itself chose.
 */
export const REFUSAL_SCRIPT =
  "(function(){var c=document.getElementById('refusal').getAttribute('data-code');" +
  "var n=new URLSearchParams(location.hash.slice(1)).get('nonce');" +
  "if(window.parent!==window&&n)window.parent.postMessage({type:'tessera:refused',v:1,nonce:n,code:c},'*');})();";

export const REFUSAL_SCRIPT_HASH = cspHashSource(REFUSAL_SCRIPT);

/** What the shopper reads in the frame (the page's developer gets the code and a longer message from tessera.js). */
export const REFUSAL_MESSAGES: Record<FieldsRefusal, string> = {
  api_key_invalid: 'Card payments are not available here: this shop’s publishable key is unknown, revoked or expired.',
  origin_not_allowed: 'Card payments are not available on this page: its address is not one this shop’s key allows.',
  fields_unavailable: 'The card fields are temporarily unavailable. Please try again in a moment.',
};

/**
 * Shown instead of the fields when the key in the URL or the page's origin cannot use them, or the
 * service cannot tell: a message, and the script that tells the framing page the code. Its <main>
 * is named, as the fields' own: it is framed in the merchant's page, beside that page's <main>.
 */
export function renderRefusalPage(code: FieldsRefusal, message: string = REFUSAL_MESSAGES[code]): string {
  return `${pageOpening('Card fields unavailable', CSS)}
<body>
<main id="refusal" data-code="${escapeHtml(code)}" aria-labelledby="fields-title">
<h1 class="visually-hidden" id="fields-title">Card details</h1>
<p class="notice">${escapeHtml(message)}</p>
</main>
<script>${REFUSAL_SCRIPT}</script>
</body>
</html>
`;
}

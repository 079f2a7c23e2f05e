import { escapeHtml } from '../domain/browserFields';
import { cardInputsMarkup, HOSTED_PAGE_CSS, pageOpening, type CardFieldsAssets } from './cardFieldsPage';

export interface HostedPageInput {
  sessionId: string;
  csrfToken: string;
  /** The session has a cancel URL: a Cancel button is shown. */
  cancelable: boolean;
  mode: 'test' | 'live';
  /** Why the last submission was refused (a catalogue message: never the card data). */
  errorMessage?: string;
}

/**
 * The hosted payment page: a full page (never framed) whose form posts the card to this origin
 * only, with the session's CSRF token. The same card inputs as the iframe; without script the
 * form still works (the server applies the same rules and shows the refusal here).
 */
export function renderHostedPage(assets: CardFieldsAssets, input: HostedPageInput): string {
  const action = `/pay/${escapeHtml(input.sessionId)}`;
  const csrf = escapeHtml(input.csrfToken);
  const alert =
    input.errorMessage === undefined ? '' : `<p class="alert" role="alert" id="form-error">${escapeHtml(input.errorMessage)}</p>\n`;
  const cancel = input.cancelable
    ? `<form class="cancel" method="post" action="${action}/cancel">
<input type="hidden" name="csrf" value="${csrf}">
<button type="submit" class="link" id="pay-cancel">Cancel and return to the shop</button>
</form>
`
    : '';
  return `${pageOpening('Pay by card', HOSTED_PAGE_CSS)}
<body>
<main>
<h1>Pay by card</h1>
<p class="sub">${input.mode === 'test' ? 'Test mode: use a published test card.' : 'Enter your card details.'}</p>
${alert}<form id="card-form" method="post" action="${action}" novalidate autocomplete="on">
<input type="hidden" name="csrf" value="${csrf}">
<input type="hidden" name="challenge" id="pay-challenge" value="">
${cardInputsMarkup({ showName: true })}
<button type="submit" class="pay" id="pay-submit">Pay</button>
</form>
${cancel}<p class="secure">Your card details are sent to Tessera, the shop’s card vault, not to the shop.</p>
</main>
<script>${assets.hostedJs}</script>
</body>
</html>
`;
}

/** The page for a session that cannot be used (unknown, expired, already used): what happened and what to do. */
export function renderHostedNotice(title: string, message: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${HOSTED_PAGE_CSS}</style></head>
<body><main><h1>${escapeHtml(title)}</h1><p class="notice" role="alert">${escapeHtml(message)}</p></main></body>
</html>
`;
}

import { ERROR_CATALOGUE, type ErrorCode } from './errors';

/** What a caller should do about each error type; one line each, shown under the table. */
const TYPE_ADVICE: Record<string, string> = {
  invalid_request_error: 'Fix the request; retrying it unchanged gives the same answer.',
  authentication_error: 'Check the API key (and the caller IP or origin it allows).',
  permission_error: 'The credentials are valid but may not do this.',
  not_found_error: 'The token or route does not exist for this merchant (other merchants\u2019 tokens look missing too).',
  card_data_error: 'The token exists but lacks data a placeholder needs (e.g. the CVV has expired): collect it again.',
  rate_limit_error: 'Wait for `Retry-After` seconds, then retry.',
  psp_error:
    'Tessera could not complete the exchange with the PSP. With `psp_timeout` and `psp_outcome_unknown` the PSP may have acted: check with it before paying again; a retry with the same Idempotency-Key replays this answer and never calls the PSP again.',
  api_error: 'A Tessera-side problem. Safe to retry with backoff (use an idempotency key for charges).',
};

const escapeCell = (text: string) => text.replace(/\|/g, '\\|');

/**
 * docs/errors.md, generated from ERROR_CATALOGUE so the table cannot drift from the code
 * (`npm run docs:errors`; a unit test fails when the committed file is stale).
 */
export function renderErrorCatalogueMarkdown(): string {
  const codes = (Object.keys(ERROR_CATALOGUE) as ErrorCode[]).sort(
    (a, b) => ERROR_CATALOGUE[a].status - ERROR_CATALOGUE[b].status || a.localeCompare(b),
  );
  const types = [...new Set(codes.map((code) => ERROR_CATALOGUE[code].type))].sort();
  const lines = [
    '# Error codes',
    '',
    '<!-- Generated from packages/common/src/errors.ts by `npm run docs:errors`. Do not edit by hand. -->',
    '',
    'Every error Tessera itself makes has this body, `content-type: application/json`, and the header',
    '`x-tessera-error: <code>` (a PSP response passed through by `/v1/proxy` never has that header):',
    '',
    '```json',
    '{ "error": { "type": "invalid_request_error", "code": "parameter_missing", "message": "number is required.", "param": "number", "requestId": "req_…" } }',
    '```',
    '',
    '`code` is stable and meant for programs; `message` is for humans and may change (it never',
    'contains submitted card data). The message below is the default; some errors give a more',
    'specific one. `param` names the request field at fault, when there is one.',
    '',
    '| Status | Code | Type | Default message |',
    '|---|---|---|---|',
    ...codes.map((code) => {
      const spec = ERROR_CATALOGUE[code];
      return `| ${spec.status} | \`${code}\` | \`${spec.type}\` | ${escapeCell(spec.message)} |`;
    }),
    '',
    '## Types',
    '',
    'The SDK (`@tessera/sdk`) throws one error class per type, all subclasses of `TesseraApiError`.',
    '',
    '| Type | What to do |',
    '|---|---|',
    ...types.map((type) => `| \`${type}\` | ${escapeCell(TYPE_ADVICE[type] ?? '')} |`),
    '',
  ];
  return lines.join('\n');
}

/* global document, navigator, window */
// The Routes page of the dashboard: a merchant's proxy routes (docs/routes.md) through
// /admin/v1/routes — the list, one route's document as YAML, applying a pasted document (its
// refusal shown next to it), deleting with confirmation, and the dry run of a sample request,
// whose answer the server has masked already. Its own module; it gets the API helper, the element
// helper, the toast and the current merchant from dashboard.js. Server data goes into the page
// with textContent only.

const $ = (id) => document.getElementById(id);

let deps = null;
/** The route a dialog acts on, and the button to focus again when it closes. */
const pending = { route: null, opener: null };
/** The routes of the merchant on show, by id, for the dry run's choice. */
let routes = [];

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const when = (iso) => (iso ? dateTime.format(new Date(iso)) : '');

function showError(id, message) {
  $(id).textContent = message ?? '';
  $(id).hidden = !message;
}

const merchantPath = () => encodeURIComponent(deps.merchant());
const routePath = (id) => `/routes/${merchantPath()}/${encodeURIComponent(id)}`;

/** Where a route applies: its path or host and upstream (inbound), or the PSP hosts (outbound). */
function whereOf(route) {
  if (route.kind === 'inbound') return `${route.inbound?.path ?? route.inbound?.host ?? ''} → ${route.inbound?.upstream ?? ''}`;
  return (route.outbound?.hosts ?? []).join(', ');
}

/**
 * The command that downloads the merchant's forward-proxy CA certificate from the API. Not a
 * download button: the certificate is the vault's (tessera:ca:{m:<id>}), and the admin service
 * never talks to the vault (docs/architecture.md: Redis only). Nor is it read from Redis: the certificate and the sealed
 * CA key are one value under one key, and Redis ACLs grant keys, not parts of a value, so a read
 * grant for the certificate would hand the admin service the sealed key too. The API answers it
 * to the merchant's own secret key, which the merchant has and the dashboard must not.
 */
export const FORWARD_PROXY_CA_COMMAND =
  'curl -fsS "$TESSERA_API_URL/v1/forward-proxy/ca.pem" -H "x-api-key: $TESSERA_SECRET_KEY" -o tessera-ca.pem';

async function copyCaCommand() {
  try {
    await navigator.clipboard.writeText($('forward-ca-command').textContent);
    $('forward-ca-copy-status').textContent = 'Copied to the clipboard.';
  } catch {
    const range = document.createRange();
    range.selectNodeContents($('forward-ca-command'));
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    $('forward-ca-copy-status').textContent = 'Selected: press Ctrl+C (or ⌘C) to copy.';
  }
}

/** Reloads the list; called when the page opens, or the merchant changes. */
export async function loadRoutes() {
  if (!deps || $('routes-view').hidden) return;
  const merchantId = deps.merchant();
  $('routes-merchant').textContent = merchantId ?? 'no merchant yet';
  $('forward-ca-merchant').textContent = merchantId ?? 'the merchant';
  $('forward-ca-copy-status').textContent = '';
  if (!merchantId) {
    routes = [];
    $('routes-body').replaceChildren();
    $('routes-table').hidden = true;
    $('routes-empty').hidden = false;
    renderDryRunChoices();
    return;
  }
  showError('routes-error', '');
  // Another merchant's document or dry run must not stay on show.
  if ($('route-show').dataset.merchant !== merchantId) hideDocument();
  if ($('dry-run-result').dataset.merchant !== merchantId) $('dry-run-result').hidden = true;
  try {
    const list = await deps.api('GET', `/routes?merchantId=${merchantPath()}`);
    routes = list.routes;
    $('routes-body').replaceChildren(...routes.map(renderRow));
    $('routes-table').hidden = routes.length === 0;
    $('routes-empty').hidden = routes.length > 0;
    renderDryRunChoices();
  } catch (err) {
    showError('routes-error', err.message);
  }
}

function renderRow(stored) {
  const { el } = deps;
  const { route } = stored;
  return el(
    'tr',
    { 'data-route-id': route.id },
    el('td', {}, el('code', { text: route.id })),
    el('td', { text: route.kind }),
    el('td', {}, el('span', { className: `badge ${route.mode === 'live' ? 'badge-live' : 'badge-test'}`, text: route.mode })),
    el('td', {}, el('code', { className: 'script-url', text: whereOf(route) })),
    el('td', { className: 'num', text: String(route.filters.length) }),
    el('td', {}, el('time', { datetime: stored.updatedAt, text: when(stored.updatedAt) })),
    el(
      'td',
      { className: 'actions' },
      el('button', {
        type: 'button',
        className: 'button button-small',
        text: 'Show',
        'aria-label': `Show the document of ${route.id}`,
        onclick: (event) => showDocument(route.id, event.currentTarget),
      }),
      el('button', {
        type: 'button',
        className: 'button button-small',
        text: 'Dry run',
        'aria-label': `Dry-run a sample on ${route.id}`,
        onclick: () => openDryRun(route.id),
      }),
      el('button', {
        type: 'button',
        className: 'button button-small button-ghost danger-text',
        text: 'Delete',
        'aria-label': `Delete ${route.id}`,
        onclick: (event) => openDelete(route, event.currentTarget),
      }),
    ),
  );
}

function renderDryRunChoices() {
  const { el } = deps;
  const select = $('dry-run-route');
  const chosen = select.value;
  select.replaceChildren(...routes.map(({ route }) => el('option', { value: route.id, text: `${route.id} (${route.kind})` })));
  if (routes.some(({ route }) => route.id === chosen)) select.value = chosen;
  $('dry-run-submit').disabled = routes.length === 0;
}

function hideDocument() {
  $('route-yaml').textContent = '';
  $('route-show').hidden = true;
  delete $('route-show').dataset.merchant;
}

async function showDocument(routeId, button) {
  button.disabled = true;
  try {
    const shown = await deps.api('GET', routePath(routeId));
    $('route-show-id').textContent = shown.route.id;
    $('route-show-updated').textContent = `Applied ${when(shown.updatedAt)}`;
    $('route-yaml').textContent = shown.yaml;
    $('route-show').dataset.merchant = shown.merchantId;
    $('route-show').hidden = false;
    $('route-show-title').focus();
  } catch (err) {
    showError('routes-error', err.message);
  } finally {
    button.disabled = false;
  }
}

function openDryRun(routeId) {
  $('dry-run-route').value = routeId;
  $('dry-run-body').focus();
}

function openDelete(route, opener) {
  pending.route = route;
  pending.opener = opener;
  $('route-delete-label').textContent = route.id;
  showError('route-delete-error', '');
  $('route-delete-dialog').showModal();
  $('route-delete-cancel').focus();
}

function renderDryRun(result) {
  const { el } = deps;
  $('dry-run-outcome').textContent =
    result.outcome === 'refused'
      ? `Refused: card data in ${result.unmatchedCardData} place(s) no filter names, and the route says refuse.`
      : result.unmatchedCardData > 0
        ? `Forwarded, with card data in ${result.unmatchedCardData} place(s) no filter names redacted.`
        : 'Forwarded.';
  $('dry-run-places').replaceChildren(
    ...result.places.map((place) =>
      el(
        'tr',
        {},
        el('td', { className: 'num', text: String(place.filterIndex) }),
        el('td', { text: place.store }),
        el('td', {}, el('code', { text: place.value })),
        el('td', {}, el('code', { text: place.becomes })),
      ),
    ),
  );
  $('dry-run-places-table').hidden = result.places.length === 0;
  $('dry-run-output').textContent = result.body;
  $('dry-run-result').dataset.merchant = deps.merchant();
  $('dry-run-result').hidden = false;
}

export function initRoutes({ api, merchant, el, toast }) {
  deps = { api, merchant, el, toast };
  $('forward-ca-command').textContent = FORWARD_PROXY_CA_COMMAND;
  $('forward-ca-copy').addEventListener('click', () => void copyCaCommand());
  $('refresh-routes').addEventListener('click', () => void loadRoutes());
  $('route-show-close').addEventListener('click', () => {
    hideDocument();
    $('routes-title').focus();
  });

  $('route-apply-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    showError('route-document-error', '');
    $('route-document').removeAttribute('aria-invalid');
    $('route-apply-result').textContent = '';
    if (!merchant()) {
      showError('route-document-error', 'Choose or create a merchant first.');
      return;
    }
    const text = $('route-document').value;
    if (text.trim() === '') {
      showError('route-document-error', 'Paste a route document first: YAML or JSON.');
      $('route-document').setAttribute('aria-invalid', 'true');
      $('route-document').focus();
      return;
    }
    const button = $('route-apply-submit');
    button.disabled = true;
    try {
      const applied = await api('POST', `/routes?merchantId=${merchantPath()}`, text, 'application/yaml');
      const summary = applied.routes
        .map((r) => `${r.route.id} ${r.outcome}${r.changed.length > 0 ? ` (${r.changed.join(', ')})` : ''}`)
        .join('; ');
      $('route-apply-result').textContent = summary;
      await loadRoutes();
      toast(`Applied: ${summary}.`);
    } catch (err) {
      // The refusal says where in the document the problem is: next to the document.
      showError('route-document-error', err.message);
      $('route-document').setAttribute('aria-invalid', 'true');
      $('route-document').focus();
    } finally {
      button.disabled = false;
    }
  });

  $('dry-run-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    showError('dry-run-error', '');
    $('dry-run-body').removeAttribute('aria-invalid');
    const routeId = $('dry-run-route').value;
    if (!routeId) {
      showError('dry-run-error', 'Apply a route first.');
      return;
    }
    const button = $('dry-run-submit');
    button.disabled = true;
    try {
      const result = await api('POST', `${routePath(routeId)}/dry-run`, {
        contentType: $('dry-run-type').value,
        body: $('dry-run-body').value,
      });
      renderDryRun(result);
      $('dry-run-result-title').focus();
    } catch (err) {
      $('dry-run-result').hidden = true;
      showError('dry-run-error', err.message);
      $('dry-run-body').setAttribute('aria-invalid', 'true');
    } finally {
      button.disabled = false;
    }
  });

  $('route-delete-dialog').addEventListener('close', () => {
    if (pending.opener && document.contains(pending.opener)) pending.opener.focus();
    pending.opener = null;
  });
  $('route-delete-cancel').addEventListener('click', () => $('route-delete-dialog').close());
  $('route-delete-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const route = pending.route;
    if (!route) return;
    const button = $('route-delete-confirm');
    button.disabled = true;
    try {
      await api('DELETE', routePath(route.id));
      pending.opener = null;
      $('route-delete-dialog').close();
      if ($('route-show-id').textContent === route.id) hideDocument();
      toast(`${route.id} is deleted.`);
      await loadRoutes();
      $('routes-title').focus();
    } catch (err) {
      showError('route-delete-error', err.message);
    } finally {
      button.disabled = false;
    }
  });
}

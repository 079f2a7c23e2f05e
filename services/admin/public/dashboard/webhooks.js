/* global document, window, navigator */
// The Webhooks page of the dashboard: a merchant's endpoints of one mode (GET …/webhook-endpoints),
// adding one (its signing secret shown once), rotating its secret, deleting it, enabling it again
// after it was disabled, and per endpoint its recent deliveries with a Resend button. Its own
// module; it gets the API helper, the element helper, the toast and the current merchant from
// dashboard.js. Server data goes into the page with textContent only.

const $ = (id) => document.getElementById(id);

let deps = null;
/** The endpoint a dialog acts on, and the button to focus again when it closes. */
const pending = { endpoint: null, opener: null };
/** The event types the server accepts, from the list answer: the form offers exactly those. */
let eventTypes = [];
/** The merchant and mode whose endpoint's secret is on show: another merchant or mode hides it. */
let secretShownFor = null;

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const when = (iso) => (iso ? dateTime.format(new Date(iso)) : '');

const OUTCOME_BADGE = { succeeded: 'badge-2xx', failed: 'badge-4xx', gave_up: 'badge-5xx' };
const OUTCOME_TEXT = { succeeded: 'Delivered', failed: 'Failed, will retry', gave_up: 'Gave up' };
const DELIVERY_LIMIT = 20;

function showError(id, message) {
  $(id).textContent = message ?? '';
  $(id).hidden = !message;
}

const mode = () => $('webhooks-mode').value;
const base = () => `/merchants/${encodeURIComponent(deps.merchant())}/webhook-endpoints`;
const query = () => `?mode=${mode()}`;

/** Reloads the endpoints and their deliveries; called when the page opens, or the merchant or the mode changes. */
export async function loadWebhooks() {
  if (!deps || $('webhooks-view').hidden) return;
  const merchantId = deps.merchant();
  $('webhooks-merchant').textContent = merchantId ?? 'no merchant yet';
  if (!merchantId) {
    $('webhook-endpoints').replaceChildren();
    $('webhooks-empty').hidden = false;
    return;
  }
  showError('webhooks-error', '');
  if (secretShownFor !== null && secretShownFor !== `${merchantId} ${mode()}`) hideSecret();
  try {
    const list = await deps.api('GET', `${base()}${query()}`);
    if (eventTypes.join() !== list.eventTypes.join()) {
      eventTypes = list.eventTypes;
      renderEventChoices();
    }
    const sections = await Promise.all(list.data.map(async (endpoint) => renderEndpoint(endpoint, await deliveriesOf(endpoint))));
    $('webhook-endpoints').replaceChildren(...sections);
    $('webhooks-empty').hidden = list.data.length > 0;
  } catch (err) {
    showError('webhooks-error', err.message);
  }
}

/** The latest attempts and what waits in the queue, or why they cannot be shown. */
async function deliveriesOf(endpoint) {
  try {
    return await deps.api('GET', `${base()}/${encodeURIComponent(endpoint.id)}/deliveries${query()}&limit=${DELIVERY_LIMIT}`);
  } catch (err) {
    return { unavailable: err.message };
  }
}

function renderEventChoices() {
  const { el } = deps;
  $('webhook-events').replaceChildren(
    ...eventTypes.map((type) =>
      el(
        'label',
        { className: 'check' },
        el('input', {
          type: 'checkbox',
          name: 'enabledEvents',
          value: type,
          checked: ['token.created', 'form_session.completed'].includes(type),
        }),
        el('code', { text: type }),
      ),
    ),
  );
  syncAllEvents();
}

/** "All events" stands alone: the single types are then moot and disabled. */
function syncAllEvents() {
  const all = $('webhook-events-all').checked;
  for (const box of $('webhook-events').querySelectorAll('input')) box.disabled = all;
}

function renderEndpoint(endpoint, result) {
  const { el } = deps;
  const titleId = `webhook-${endpoint.id}-title`;
  const label = endpoint.url;
  const disabled = endpoint.status === 'disabled';
  return el(
    'section',
    { className: 'page-entry webhook-entry', 'aria-labelledby': titleId, 'data-endpoint-id': endpoint.id },
    el(
      'div',
      { className: 'card-head' },
      el('h3', { id: titleId }, el('code', { className: 'script-url', text: endpoint.url })),
      el('span', { className: `badge ${disabled ? 'badge-5xx' : 'badge-2xx'}`, text: disabled ? 'Disabled' : 'Enabled' }),
    ),
    el(
      'p',
      { className: 'muted' },
      el('code', { text: endpoint.id }),
      el('span', { text: ` · created ${when(endpoint.createdAt)}` }),
      endpoint.previousSecretExpiresAt
        ? el('span', { text: ` · previous secret signs until ${when(endpoint.previousSecretExpiresAt)}` })
        : null,
    ),
    el(
      'div',
      { className: 'restriction-line' },
      el('span', { className: 'chip-label', text: 'Events' }),
      el(
        'span',
        { className: 'chips' },
        endpoint.enabledEvents.map((type) => el('span', { className: 'chip', text: type === '*' ? 'All events' : type })),
      ),
    ),
    disabled
      ? el(
          'div',
          { className: 'attack-banner', role: 'note' },
          el('strong', { text: 'Delivery stopped. ' }),
          el('span', { text: disabledText(endpoint.disabledReason) }),
        )
      : null,
    el(
      'div',
      { className: 'actions webhook-actions' },
      disabled
        ? el('button', {
            type: 'button',
            className: 'button button-small button-primary',
            text: 'Enable',
            'aria-label': `Enable ${label}`,
            onclick: (event) => enable(endpoint, event.currentTarget),
          })
        : null,
      el('button', {
        type: 'button',
        className: 'button button-small',
        text: 'Rotate secret',
        'aria-label': `Rotate the signing secret of ${label}`,
        onclick: (event) => openRotate(endpoint, event.currentTarget),
      }),
      el('button', {
        type: 'button',
        className: 'button button-small button-ghost danger-text',
        text: 'Delete',
        'aria-label': `Delete ${label}`,
        onclick: (event) => openDelete(endpoint, event.currentTarget),
      }),
    ),
    renderDeliveries(endpoint, result),
  );
}

function disabledText(reason) {
  const since = /^failing_since:(.+)$/.exec(reason ?? '');
  const started = since ? when(since[1]) : '';
  return since && started
    ? `Every delivery failed since ${started}, so Tessera stopped sending. Fix the receiver, then enable it: events from now on are sent again.`
    : 'Fix the receiver, then enable it: events from now on are sent again.';
}

function renderDeliveries(endpoint, result) {
  const { el } = deps;
  const heading = el('h4', { className: 'label-text', text: 'Recent deliveries' });
  if (result.unavailable) return el('div', {}, heading, el('p', { className: 'muted', text: result.unavailable }));
  const { depth, oldestCreatedAt } = result.queued;
  const waiting = el('p', {
    className: 'muted',
    text:
      depth === 0
        ? 'Nothing waits in its queue.'
        : `Waiting in its queue: ${depth} event${depth === 1 ? '' : 's'}, the oldest created ${when(oldestCreatedAt)}.`,
  });
  if (result.deliveries.length === 0) return el('div', {}, heading, waiting, el('p', { className: 'muted', text: 'No deliveries yet.' }));
  // One Resend per event, on its newest attempt: older rows are its history.
  const newest = result.deliveries.map((d, i) => result.deliveries.findIndex((other) => other.eventId === d.eventId) === i);
  const rows = result.deliveries.map((d, i) =>
    el(
      'tr',
      { 'data-event-id': d.eventId },
      el('td', {}, el('time', { datetime: d.at, text: when(d.at) })),
      el('td', {}, el('code', { text: d.eventId }), el('span', { className: 'sub', text: d.eventType })),
      el('td', { className: 'num', text: String(d.attempt) }),
      el(
        'td',
        {},
        el('span', { className: `badge ${OUTCOME_BADGE[d.outcome] ?? 'badge-4xx'}`, text: OUTCOME_TEXT[d.outcome] ?? d.outcome }),
        d.nextAttemptAt ? el('span', { className: 'sub', text: `next try ${when(d.nextAttemptAt)}` }) : null,
      ),
      el('td', { className: 'num', text: d.responseStatus === null ? (d.error ?? '—') : String(d.responseStatus) }),
      el('td', { className: 'num', text: d.latencyMs === null ? '—' : `${Math.round(d.latencyMs)} ms` }),
      el(
        'td',
        { className: 'actions' },
        newest[i]
          ? el('button', {
              type: 'button',
              className: 'button button-small',
              text: 'Resend',
              'aria-label': `Resend ${d.eventId} to ${endpoint.url}`,
              onclick: (event) => resend(endpoint, d.eventId, event.currentTarget),
            })
          : null,
      ),
    ),
  );
  return el(
    'div',
    {},
    heading,
    waiting,
    el(
      'div',
      { className: 'table-wrap' },
      el(
        'table',
        { className: 'table table-compact' },
        el('caption', { className: 'visually-hidden', text: `Recent deliveries to ${endpoint.url}` }),
        el(
          'thead',
          {},
          el(
            'tr',
            {},
            ...['Time', 'Event', 'Attempt', 'Outcome', 'Response', 'Latency'].map((h) => el('th', { scope: 'col', text: h })),
            el('th', { scope: 'col' }, el('span', { className: 'visually-hidden', text: 'Actions' })),
          ),
        ),
        el('tbody', {}, ...rows),
      ),
    ),
  );
}

function hideSecret() {
  $('webhook-secret-value').textContent = '';
  $('webhook-secret').hidden = true;
  secretShownFor = null;
}

function showSecret(url, secret, title) {
  secretShownFor = `${deps.merchant()} ${mode()}`;
  $('webhook-secret-title').firstChild.textContent = `${title} `;
  $('webhook-secret-url').textContent = url;
  $('webhook-secret-value').textContent = secret;
  $('webhook-copy-status').textContent = '';
  $('webhook-secret').hidden = false;
  $('webhook-secret').focus();
}

async function enable(endpoint, button) {
  button.disabled = true;
  try {
    await deps.api('POST', `${base()}/${encodeURIComponent(endpoint.id)}/enable${query()}`);
    deps.toast(`${endpoint.url} is enabled again.`);
    await loadWebhooks();
    $('webhook-endpoints-title').focus();
  } catch (err) {
    showError('webhooks-error', err.message);
    button.disabled = false;
  }
}

async function resend(endpoint, eventId, button) {
  button.disabled = true;
  try {
    await deps.api('POST', `${base()}/${encodeURIComponent(endpoint.id)}/deliveries/${encodeURIComponent(eventId)}/resend${query()}`);
    deps.toast(`${eventId} is queued for ${endpoint.url} again.`);
    // The queue now holds it: show so, keeping the operator's place on the page.
    await loadWebhooks();
    const again = document.querySelector(`[data-endpoint-id="${endpoint.id}"] [data-event-id="${eventId}"] button`);
    (again ?? $('webhook-endpoints-title')).focus();
  } catch (err) {
    showError('webhooks-error', err.message);
    button.disabled = false;
  }
}

function openRotate(endpoint, opener) {
  pending.endpoint = endpoint;
  pending.opener = opener;
  $('webhook-rotate-label').textContent = endpoint.url;
  $('webhook-rotate-overlap').value = '86400';
  showError('webhook-rotate-error', '');
  $('webhook-rotate-dialog').showModal();
  $('webhook-rotate-overlap').focus();
}

function openDelete(endpoint, opener) {
  pending.endpoint = endpoint;
  pending.opener = opener;
  $('webhook-delete-label').textContent = endpoint.url;
  showError('webhook-delete-error', '');
  $('webhook-delete-dialog').showModal();
  $('webhook-delete-cancel').focus();
}

function clearCreateErrors() {
  for (const field of ['url', 'events']) showError(`webhook-${field}-error`, '');
  $('webhook-url').removeAttribute('aria-invalid');
  showError('webhook-create-error', '');
}

/** An API refusal next to the field it names (`url`, `enabledEvents`), else under the form. */
function showCreateError(err) {
  if (err.param === 'url') {
    showError('webhook-url-error', err.message);
    $('webhook-url').setAttribute('aria-invalid', 'true');
    $('webhook-url').focus();
  } else if (err.param === 'enabledEvents') {
    showError('webhook-events-error', err.message);
    $('webhook-events-all').focus();
  } else {
    showError('webhook-create-error', err.message);
  }
}

async function copySecret() {
  try {
    await navigator.clipboard.writeText($('webhook-secret-value').textContent);
    $('webhook-copy-status').textContent = 'Copied to the clipboard.';
  } catch {
    const range = document.createRange();
    range.selectNodeContents($('webhook-secret-value'));
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    $('webhook-copy-status').textContent = 'Selected: press Ctrl+C (or ⌘C) to copy.';
  }
}

export function initWebhooks({ api, merchant, el, toast }) {
  deps = { api, merchant, el, toast };
  $('webhooks-mode').addEventListener('change', () => void loadWebhooks());
  $('refresh-webhooks').addEventListener('click', () => void loadWebhooks());
  $('webhook-events-all').addEventListener('change', syncAllEvents);

  $('webhook-create-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    clearCreateErrors();
    if (!merchant()) {
      showError('webhook-create-error', 'Choose or create a merchant first.');
      return;
    }
    const enabledEvents = $('webhook-events-all').checked
      ? ['*']
      : [...$('webhook-events').querySelectorAll('input:checked')].map((box) => box.value);
    const button = $('webhook-create-submit');
    button.disabled = true;
    try {
      const created = await api('POST', `${base()}${query()}`, { url: $('webhook-url').value.trim(), enabledEvents });
      $('webhook-url').value = '';
      await loadWebhooks();
      // Shown once the list already holds the endpoint, so the page never contradicts itself.
      showSecret(created.url, created.secret, 'Signing secret of');
      toast(`Added ${created.url}.`);
    } catch (err) {
      showCreateError(err);
    } finally {
      button.disabled = false;
    }
  });

  $('copy-webhook-secret').addEventListener('click', () => void copySecret());
  $('dismiss-webhook-secret').addEventListener('click', () => {
    hideSecret();
    $('webhook-url').focus();
  });

  for (const id of ['webhook-rotate-dialog', 'webhook-delete-dialog']) {
    $(id).addEventListener('close', () => {
      if (pending.opener && document.contains(pending.opener)) pending.opener.focus();
      pending.opener = null;
    });
  }
  $('webhook-rotate-cancel').addEventListener('click', () => $('webhook-rotate-dialog').close());
  $('webhook-delete-cancel').addEventListener('click', () => $('webhook-delete-dialog').close());

  $('webhook-rotate-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const endpoint = pending.endpoint;
    if (!endpoint) return;
    const button = $('webhook-rotate-confirm');
    button.disabled = true;
    try {
      const rotated = await api('POST', `${base()}/${encodeURIComponent(endpoint.id)}/rotate-secret${query()}`, {
        expiresInSeconds: Number($('webhook-rotate-overlap').value),
      });
      pending.opener = null;
      $('webhook-rotate-dialog').close();
      await loadWebhooks();
      showSecret(rotated.url, rotated.secret, 'New signing secret of');
      toast(
        rotated.previousSecretExpiresAt
          ? `New secret made; the previous one signs until ${when(rotated.previousSecretExpiresAt)}.`
          : 'New secret made; the previous one no longer signs.',
      );
    } catch (err) {
      showError('webhook-rotate-error', err.message);
    } finally {
      button.disabled = false;
    }
  });

  $('webhook-delete-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const endpoint = pending.endpoint;
    if (!endpoint) return;
    const button = $('webhook-delete-confirm');
    button.disabled = true;
    try {
      await api('DELETE', `${base()}/${encodeURIComponent(endpoint.id)}${query()}`);
      pending.opener = null;
      $('webhook-delete-dialog').close();
      toast(`${endpoint.url} is deleted.`);
      await loadWebhooks();
      $('webhook-endpoints-title').focus();
    } catch (err) {
      showError('webhook-delete-error', err.message);
    } finally {
      button.disabled = false;
    }
  });
}

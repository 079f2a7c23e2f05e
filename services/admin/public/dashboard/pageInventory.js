/* global document */
// The Payment pages page of the dashboard (SAQ A kit): the headers a merchant's payment page should
// send (GET …/page-policy), the scripts its pages ran with their status (GET …/page-inventory),
// authorizing a script or accepting a changed policy with a justification, and the evidence
// export. Its own module; it gets the API helper, the element helper, the toast and the current
// merchant from dashboard.js.

const $ = (id) => document.getElementById(id);

let deps = null;
/** What the dialog authorizes: { kind: 'script', pageId, scriptKey } or { kind: 'policy', pageId }; and what to focus after. */
const pending = { subject: null, opener: null };

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const when = (iso) => (iso ? dateTime.format(new Date(iso)) : '');

const STATUS_TEXT = { new: 'New', changed: 'Changed', authorized: 'Authorized' };
const STATUS_BADGE = { new: 'badge-4xx', changed: 'badge-5xx', authorized: 'badge-2xx' };
const EVENT_TEXT = {
  page_first_seen: 'First report',
  script_added: 'Script added',
  script_changed: 'Script changed',
  script_removed: 'Script removed',
  policy_changed: 'Policy changed',
  policy_weakened: 'Policy weakened',
  scripts_capped: 'Too many scripts',
};

function showError(id, message) {
  $(id).textContent = message ?? '';
  $(id).hidden = !message;
}

const mode = () => $('pages-mode').value;
const base = () => `/merchants/${encodeURIComponent(deps.merchant())}`;

function exportLinks() {
  const merchantId = deps.merchant();
  for (const format of ['json', 'csv']) {
    const link = $(`inventory-export-${format}`);
    if (merchantId) link.href = `/admin/v1${base()}/page-inventory/export?mode=${mode()}&format=${format}`;
    else link.removeAttribute('href');
  }
}

/** Reloads the policy and the inventory; called when the page opens, the merchant or the mode changes. */
export async function loadPageInventory() {
  if (!deps || $('pages-view').hidden) return;
  const merchantId = deps.merchant();
  $('pages-merchant').textContent = merchantId ?? 'no merchant yet';
  exportLinks();
  if (!merchantId) return;
  await Promise.all([loadPolicy(), loadInventory()]);
}

async function loadPolicy() {
  showError('page-policy-error', '');
  try {
    const policy = await deps.api('GET', `${base()}/page-policy?mode=${mode()}`);
    $('page-policy-body').hidden = false;
    $('page-policy-headers').textContent = Object.entries(policy.headers)
      .map(([name, value]) => `${name}: ${value}`)
      .join('\n');
    $('page-policy-script').textContent = policy.scriptTag;
    $('page-policy-notes').replaceChildren(...policy.notes.map((note) => deps.el('li', { text: note })));
  } catch (err) {
    $('page-policy-body').hidden = true;
    showError('page-policy-error', err.message);
  }
}

async function loadInventory() {
  showError('inventory-error', '');
  try {
    const view = await deps.api('GET', `${base()}/page-inventory?mode=${mode()}`);
    render(view);
  } catch (err) {
    showError('inventory-error', err.message);
  }
}

function render(view) {
  const { el } = deps;
  const flagged = view.pages.filter((p) => p.flagged).length;
  $('inventory-summary').textContent =
    view.pages.length === 0 ? '' : `${view.pages.length} page${view.pages.length === 1 ? '' : 's'}, ${flagged} needing review.`;
  $('inventory-empty').hidden = view.pages.length > 0;
  $('inventory-pages').replaceChildren(...view.pages.map((page) => renderPage(page, el)));
}

function flagText(page) {
  const parts = [];
  if (page.flags.newScripts) parts.push(`${page.flags.newScripts} new script${page.flags.newScripts === 1 ? '' : 's'}`);
  if (page.flags.changedScripts) parts.push(`${page.flags.changedScripts} changed script${page.flags.changedScripts === 1 ? '' : 's'}`);
  if (page.flags.policyWeakened) parts.push('weaker policy');
  return parts.join(', ');
}

function renderPage(page, el) {
  const titleId = `page-${page.id}-title`;
  const scriptName = (s) => s.url ?? `Inline script ${s.hash.slice(0, 19)}…`;
  const rows = page.scripts.map((s) =>
    el(
      'tr',
      { className: s.present ? '' : 'row-muted' },
      el(
        'td',
        {},
        el('code', { className: 'script-url', text: scriptName(s) }),
        s.present ? null : el('span', { className: 'sub', text: 'no longer on the page' }),
      ),
      el(
        'td',
        {},
        s.hash
          ? el('code', { className: 'hash', title: s.hash, text: s.hash.length > 27 ? `${s.hash.slice(0, 27)}…` : s.hash })
          : el('span', { text: 'Unhashable' }),
        el('span', {
          className: 'sub',
          text: s.unhashable ? 'add an integrity attribute' : s.hashSource === 'integrity' ? 'SRI' : s.hashSource,
        }),
      ),
      el('td', { text: when(s.firstSeenAt) }),
      el('td', { text: when(s.lastSeenAt) }),
      el(
        'td',
        {},
        el('span', { className: `badge ${STATUS_BADGE[s.status]}`, text: STATUS_TEXT[s.status] }),
        s.authorization ? el('span', { className: 'sub', text: `${s.authorization.by}: ${s.authorization.justification}` }) : null,
      ),
      el(
        'td',
        { className: 'actions' },
        s.status === 'authorized'
          ? null
          : el('button', {
              type: 'button',
              className: 'button',
              text: 'Authorize',
              'aria-label': `Authorize ${scriptName(s)}`,
              onclick: (event) => openDialog({ kind: 'script', pageId: page.id, scriptKey: s.key }, scriptName(s), event.currentTarget),
            }),
      ),
    ),
  );
  const policy = [
    el('dt', { text: 'Meta policy' }),
    el('dd', {}, page.policy ? el('code', { text: page.policy }) : el('span', { text: 'none in the page' })),
    el('dt', { text: 'Header policy' }),
    el(
      'dd',
      {},
      page.headerPolicy
        ? el('code', { text: page.headerPolicy })
        : el('span', { text: 'not seen yet (it arrives with violation reports)' }),
    ),
  ];
  return el(
    'section',
    { className: `page-entry${page.flagged ? ' page-flagged' : ''}`, 'aria-labelledby': titleId, 'data-page-id': page.id },
    el(
      'div',
      { className: 'card-head' },
      el('h3', { id: titleId }, el('code', { text: page.url })),
      page.flagged
        ? el('span', { className: 'badge badge-5xx', text: `Needs review: ${flagText(page)}` })
        : el('span', { className: 'badge badge-2xx', text: 'Nothing to review' }),
    ),
    el('p', { className: 'muted', text: `Last report ${when(page.lastSeenAt)}; first ${when(page.firstSeenAt)}.` }),
    page.policyWeakenings.length > 0
      ? el(
          'div',
          { className: 'attack-banner', role: 'note' },
          el('strong', { text: 'Weaker Content-Security-Policy. ' }),
          el('span', { text: page.policyWeakenings.join(' ') }),
          el('button', {
            type: 'button',
            className: 'button',
            text: 'Accept policy',
            'aria-label': `Accept the current policy of ${page.url}`,
            onclick: (event) => openDialog({ kind: 'policy', pageId: page.id }, `the policy of ${page.url}`, event.currentTarget),
          }),
        )
      : null,
    el('dl', { className: 'detail-list' }, ...policy),
    page.scripts.length === 0
      ? el('p', { className: 'muted', text: 'No scripts reported yet: this page is known from its CSP violation reports.' })
      : el(
          'div',
          { className: 'table-wrap' },
          el(
            'table',
            { className: 'table table-compact' },
            el('caption', { className: 'visually-hidden', text: `Scripts of ${page.url}` }),
            el(
              'thead',
              {},
              el(
                'tr',
                {},
                ...['Script', 'Hash', 'First seen', 'Last seen', 'Status'].map((h) => el('th', { scope: 'col', text: h })),
                el('th', { scope: 'col' }, el('span', { className: 'visually-hidden', text: 'Actions' })),
              ),
            ),
            el('tbody', {}, ...rows),
          ),
        ),
    page.events.length > 0
      ? el(
          'details',
          {},
          el('summary', { text: `Changes (${page.events.length})` }),
          el(
            'ul',
            { className: 'events' },
            ...page.events.map((e) =>
              el('li', {}, el('strong', { text: `${EVENT_TEXT[e.kind] ?? e.kind} ` }), el('span', { text: `${when(e.at)}: ${e.detail}` })),
            ),
          ),
        )
      : null,
    el(
      'details',
      { open: page.violations.length > 0 ? true : undefined },
      el('summary', { text: `CSP violations (${page.violations.length})` }),
      page.violations.length === 0
        ? el('p', { className: 'muted', text: 'None reported.' })
        : el(
            'ul',
            { className: 'events violations' },
            ...page.violations.map((v) =>
              el(
                'li',
                {},
                el('strong', { text: `${v.directive} ` }),
                el('code', { text: v.blockedUrl }),
                el('span', { text: ` ${when(v.at)} (${v.disposition})` }),
              ),
            ),
          ),
    ),
  );
}

function openDialog(subject, label, opener) {
  pending.subject = subject;
  pending.opener = opener;
  $('authorize-label').textContent = label;
  $('authorize-subject').textContent =
    subject.kind === 'script'
      ? 'Authorizes this script as it is now: if its content changes, it is flagged again.'
      : 'Makes the page’s current Content-Security-Policy its baseline: later changes are compared with it.';
  $('authorize-confirm').textContent = subject.kind === 'script' ? 'Authorize script' : 'Accept policy';
  $('authorize-justification').value = '';
  $('authorize-justification').removeAttribute('aria-invalid');
  showError('authorize-error', '');
  $('authorize-dialog').showModal();
  $('authorize-justification').focus();
}

export function initPageInventory({ api, merchant, el, toast }) {
  deps = { api, merchant, el, toast };
  $('pages-mode').addEventListener('change', () => void loadPageInventory());
  $('refresh-pages').addEventListener('click', () => void loadPageInventory());
  $('authorize-cancel').addEventListener('click', () => $('authorize-dialog').close());
  $('authorize-dialog').addEventListener('close', () => {
    if (pending.opener && document.contains(pending.opener)) pending.opener.focus();
    else $('inventory-title').focus?.();
    pending.opener = null;
  });
  $('authorize-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const subject = pending.subject;
    if (!subject) return;
    const justification = $('authorize-justification').value.trim();
    if (justification.length < 3) {
      $('authorize-justification').setAttribute('aria-invalid', 'true');
      showError('authorize-error', 'Say why the page needs it (PCI DSS 6.4.3).');
      return;
    }
    const button = $('authorize-confirm');
    button.disabled = true;
    try {
      const path = subject.kind === 'script' ? 'authorizations' : 'policy-acceptances';
      const body =
        subject.kind === 'script'
          ? { mode: mode(), pageId: subject.pageId, scriptKey: subject.scriptKey, justification }
          : { mode: mode(), pageId: subject.pageId, justification };
      await api('POST', `${base()}/page-inventory/${path}`, body);
      pending.opener = null;
      $('authorize-dialog').close();
      toast(subject.kind === 'script' ? 'Script authorized.' : 'Policy accepted as the baseline.');
      await loadInventory();
      $('inventory-title').setAttribute('tabindex', '-1');
      $('inventory-title').focus();
    } catch (err) {
      showError('authorize-error', err.message);
    } finally {
      button.disabled = false;
    }
  });
}

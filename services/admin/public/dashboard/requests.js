/* global document, window, URLSearchParams */
// The Requests page of the dashboard: the merchant's request log (GET /admin/v1/requests), one
// entry in full, and charts of the last hours (GET /admin/v1/requests/stats). Its own module; it
// gets the API helper, the element helper and the current merchant from dashboard.js.

import { drawChart, legend } from './chart.js';
import { loadPageInventory } from './pageInventory.js';
import { loadWebhooks } from './webhooks.js';
import { loadRoutes } from './routes.js';

const $ = (id) => document.getElementById(id);

let deps = null;
const state = { cursor: null, opener: null, loading: false };

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
// The list shows the time of day (the log covers days at most); the full date is in each cell's title.
const shortTime = new Intl.DateTimeFormat(undefined, { timeStyle: 'medium' });

function showError(message) {
  $('requests-error').textContent = message ?? '';
  $('requests-error').hidden = !message;
}

/** The dashboard's pages by address: the keys page unless the hash names another. */
const PAGE_VIEWS = [
  { hash: '', view: 'app-view', nav: 'nav-keys' },
  { hash: '#requests', view: 'requests-view', nav: 'nav-requests' },
  { hash: '#pages', view: 'pages-view', nav: 'nav-pages' },
  { hash: '#webhooks', view: 'webhooks-view', nav: 'nav-webhooks' },
  { hash: '#routes', view: 'routes-view', nav: 'nav-routes' },
];

/** Shows the page the address asks for (#requests, #pages, #webhooks, #routes, or the keys page), once signed in. */
export function showPage() {
  const current = PAGE_VIEWS.find((p) => p.hash !== '' && p.hash === window.location.hash) ?? PAGE_VIEWS[0];
  for (const page of PAGE_VIEWS) {
    $(page.view).hidden = page !== current;
    if (page === current) $(page.nav).setAttribute('aria-current', 'page');
    else $(page.nav).removeAttribute('aria-current');
  }
  if (current.view === 'requests-view') void loadRequests().catch((err) => showError(err.message));
  if (current.view === 'pages-view') void loadPageInventory();
  if (current.view === 'webhooks-view') void loadWebhooks();
  if (current.view === 'routes-view') void loadRoutes();
}

/** Signed out or setting up two-factor: neither page. */
export function hideRequests() {
  $('requests-view').hidden = true;
  $('pages-view').hidden = true;
  $('webhooks-view').hidden = true;
  $('routes-view').hidden = true;
}

function merchantQuery() {
  return `merchantId=${encodeURIComponent(deps.merchant())}`;
}

/** Reloads the charts and the first page of the list; called when the page opens or the merchant changes. */
export async function loadRequests() {
  if (!deps || $('requests-view').hidden) return;
  const merchantId = deps.merchant();
  $('requests-merchant').textContent = merchantId ?? 'no merchant yet';
  if (!merchantId) return;
  await Promise.all([loadStats(), loadList(true)]);
}

// ---------- charts ----------

const percent = (v) => `${Math.round(v * 10) / 10}%`;
const milliseconds = (v) => (v >= 1000 ? `${Math.round(v / 100) / 10} s` : `${Math.round(v)} ms`);

async function loadStats() {
  const hours = $('stats-hours').value;
  const stats = await deps.api('GET', `/requests/stats?${merchantQuery()}&hours=${hours}`);
  const times = stats.minutes.map((m) => m.at);
  const t = stats.totals;
  const peak = Math.max(0, ...stats.minutes.map((m) => m.requests));
  const p = (v) => (v === null ? 'none' : milliseconds(v));
  $('stats-summary').textContent =
    `Last ${hours} h: ${t.requests} requests, ${percent(t.errorRate * 100)} errors (${t.clientErrors} 4xx, ${t.serverErrors} 5xx), ` +
    `${t.pspCalls} PSP calls, PSP p50 ${p(t.pspP50Ms)}, p99 ${p(t.pspP99Ms)}.`;

  const requestSeries = [{ name: 'Requests', className: 'series-requests', kind: 'bars', values: stats.minutes.map((m) => m.requests) }];
  const errorSeries = [
    {
      name: 'Error rate',
      className: 'series-errors',
      kind: 'line',
      values: stats.minutes.map((m) => (m.requests ? m.errorRate * 100 : null)),
    },
  ];
  const latencySeries = [
    { name: 'PSP p50', className: 'series-p50', kind: 'line', values: stats.minutes.map((m) => m.pspP50Ms) },
    { name: 'PSP p99', className: 'series-p99', kind: 'line', values: stats.minutes.map((m) => m.pspP99Ms) },
  ];
  const figure = (heading, series, chart) => {
    const box = document.createElement('figure');
    box.className = 'chart-box';
    const caption = document.createElement('figcaption');
    caption.textContent = heading;
    box.append(caption, chart, legend(series));
    return box;
  };
  $('stats-charts').replaceChildren(
    figure(
      'Requests per minute',
      requestSeries,
      drawChart({
        id: 'chart-requests',
        title: 'Requests per minute',
        description: `${t.requests} requests in the last ${hours} hours; at most ${peak} in one minute.`,
        times,
        series: requestSeries,
        format: (v) => String(Math.round(v)),
      }),
    ),
    figure(
      'Error rate',
      errorSeries,
      drawChart({
        id: 'chart-errors',
        title: 'Error rate per minute (4xx and 5xx answers)',
        description: `${percent(t.errorRate * 100)} of requests in the last ${hours} hours were answered with an error.`,
        times,
        series: errorSeries,
        format: percent,
      }),
    ),
    figure(
      'PSP latency',
      latencySeries,
      drawChart({
        id: 'chart-latency',
        title: 'PSP latency per minute, p50 and p99',
        description: `PSP p50 ${p(t.pspP50Ms)} and p99 ${p(t.pspP99Ms)} over ${t.pspCalls} calls in the last ${hours} hours.`,
        times,
        series: latencySeries,
        format: milliseconds,
      }),
    ),
  );
}

// ---------- list ----------

function filterQuery() {
  const form = $('requests-filter');
  const params = new URLSearchParams();
  for (const name of ['status', 'path', 'keyId', 'requestId']) {
    const value = form.elements[name].value.trim();
    if (value) params.set(name, value);
  }
  return params.toString();
}

function statusBadge(entry) {
  const cls = `${Math.floor(entry.status / 100)}xx`;
  return deps.el('span', { className: `badge badge-status badge-${cls}`, text: String(entry.status) });
}

function pspCell(entry) {
  if (!entry.psp) return deps.el('td', { className: 'muted-cell', text: '—' });
  const outcome = entry.psp.status === null ? 'not reached' : `${entry.psp.status} in ${milliseconds(entry.psp.ms)}`;
  return deps.el('td', {}, deps.el('code', { text: entry.psp.host }), deps.el('span', { className: 'sub', text: outcome }));
}

function row(entry) {
  const { el } = deps;
  return el(
    'tr',
    { 'data-entry-id': entry.id },
    el(
      'td',
      {},
      el('time', { datetime: entry.at, title: dateTime.format(new Date(entry.at)), text: shortTime.format(new Date(entry.at)) }),
    ),
    el(
      'td',
      {},
      el('span', { className: 'method', text: entry.method }),
      ' ',
      el('code', { text: entry.path }),
      el('span', { className: 'sub', text: entry.requestId }),
    ),
    el('td', {}, statusBadge(entry), entry.code ? el('span', { className: 'sub', text: entry.code }) : null),
    el('td', {}, el('code', { text: entry.keyId }), el('span', { className: 'sub', text: entry.mode })),
    el('td', { className: 'num', text: milliseconds(entry.ms) }),
    pspCell(entry),
    el(
      'td',
      {},
      el('button', {
        type: 'button',
        className: 'button button-small',
        text: 'Details',
        'aria-label': `Details of request ${entry.requestId}`,
        onclick: (e) => openDetail(entry.id, e.currentTarget),
      }),
    ),
  );
}

async function loadList(reset) {
  if (state.loading) return;
  state.loading = true;
  showError('');
  try {
    const filters = filterQuery();
    const cursor = reset ? '' : `&cursor=${encodeURIComponent(state.cursor)}`;
    const page = await deps.api('GET', `/requests?${merchantQuery()}&limit=50${filters ? `&${filters}` : ''}${cursor}`);
    const rows = page.entries.map(row);
    if (reset) $('requests-body').replaceChildren(...rows);
    else $('requests-body').append(...rows);
    state.cursor = page.nextCursor;
    $('requests-more').hidden = page.nextCursor === null;
    $('requests-empty').hidden = $('requests-body').children.length > 0;
  } finally {
    state.loading = false;
  }
}

// ---------- detail ----------

function detailRow(term, value, code = false) {
  const { el } = deps;
  return [
    el('dt', { text: term }),
    el('dd', {}, value === null || value === undefined || value === '' ? '—' : code ? el('code', { text: String(value) }) : String(value)),
  ];
}

async function openDetail(id, opener) {
  state.opener = opener;
  const entry = await deps.api('GET', `/requests/${encodeURIComponent(id)}?${merchantQuery()}`);
  $('request-dialog-id').textContent = entry.requestId;
  const rows = [
    ...detailRow('Time', dateTime.format(new Date(entry.at))),
    ...detailRow('Request id', entry.requestId, true),
    ...detailRow('Key', `${entry.keyId} (${entry.mode})`),
    ...detailRow('Request', `${entry.method} ${entry.path}`, true),
    ...detailRow('Route', entry.route, true),
    ...detailRow('Status', entry.aborted ? `${entry.status} (client went away)` : entry.status),
    ...detailRow('Error code', entry.code, true),
    ...detailRow('Total time', milliseconds(entry.ms)),
  ];
  if (entry.psp) {
    rows.push(
      ...detailRow('PSP', `${entry.psp.method} ${entry.psp.host}`, true),
      ...detailRow('PSP status', entry.psp.status === null ? 'not reached' : entry.psp.status),
      ...detailRow('PSP time', entry.psp.ms === null ? null : milliseconds(entry.psp.ms)),
      ...detailRow('Token', entry.psp.token, true),
      ...detailRow('Header names', entry.psp.headerNames.join(', ')),
    );
  }
  $('request-detail').replaceChildren(...rows);
  $('request-template-block').hidden = !entry.psp;
  $('request-template').textContent = entry.psp?.bodyTemplate ?? '(no body)';
  $('request-template-truncated').hidden = !entry.psp?.bodyTemplateTruncated;
  $('request-dialog').showModal();
  $('request-dialog-close').focus();
}

export function initRequests({ api, merchant, el }) {
  deps = { api, merchant, el };
  window.addEventListener('hashchange', () => {
    // Only once signed in: the login and two-factor screens stay as they are.
    if (PAGE_VIEWS.some((page) => !$(page.view).hidden)) showPage();
  });
  $('requests-filter').addEventListener('submit', (event) => {
    event.preventDefault();
    loadList(true).catch((err) => showError(err.message));
  });
  $('requests-filter').addEventListener('reset', () => {
    setTimeout(() => loadList(true).catch((err) => showError(err.message)));
  });
  $('requests-more').addEventListener('click', () => loadList(false).catch((err) => showError(err.message)));
  $('stats-hours').addEventListener('change', () => loadStats().catch((err) => showError(err.message)));
  $('refresh-requests').addEventListener('click', () => loadRequests().catch((err) => showError(err.message)));
  $('request-dialog-close').addEventListener('click', () => $('request-dialog').close());
  $('request-dialog').addEventListener('close', () => {
    if (state.opener && document.contains(state.opener)) state.opener.focus();
    state.opener = null;
  });
}

/* global document, window, navigator */
// Tessera dashboard: a small vanilla module, no build step. It talks to the admin API on the same
// origin; the session cookie is HttpOnly, and every change carries the session's CSRF token.
// Data from the server is put into the page with textContent only, never as HTML.

import { initReturnUrls, loadReturnUrls } from './returnUrls.js';
import { hideRequests, initRequests, loadRequests, showPage } from './requests.js';
import { initPageInventory, loadPageInventory } from './pageInventory.js';
import { initWebhooks, loadWebhooks } from './webhooks.js';
import { initRoutes, loadRoutes } from './routes.js';

const API = '/admin/v1';
const $ = (id) => document.getElementById(id);

const state = {
  operator: null,
  csrfToken: null,
  merchants: [],
  merchant: null,
  keys: [],
  editing: null,
  revoking: null,
  opener: null,
};

class ApiError extends Error {
  constructor(status, error) {
    super(error?.message ?? `Request failed (${status}).`);
    this.status = status;
    this.code = error?.code ?? 'unknown';
    this.param = error?.param;
  }
}

/** `contentType`: `body` is text sent as is (a route file's YAML); otherwise it is sent as JSON. */
async function api(method, path, body, contentType) {
  const headers = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = contentType ?? 'application/json';
  if (method !== 'GET' && state.csrfToken) headers['x-csrf-token'] = state.csrfToken;
  let res;
  try {
    res = await fetch(API + path, {
      method,
      headers,
      body: body === undefined ? undefined : contentType !== undefined ? body : JSON.stringify(body),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, { message: 'The dashboard cannot reach the gateway. Check your connection and try again.' });
  }
  let data = null;
  if (res.status !== 204) {
    try {
      data = await res.json();
    } catch {
      data = null;
    }
  }
  if (!res.ok) {
    const err = new ApiError(res.status, data?.error);
    if (err.code === 'rate_limited') {
      const wait = res.headers.get('retry-after');
      if (wait) err.message = `Too many attempts. Try again in ${wait} seconds.`;
    }
    if (err.status === 401 && err.code === 'admin_session_required' && path !== '/session') showLogin(err.message);
    throw err;
  }
  return data;
}

// ---------- formatting ----------

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

function ago(iso) {
  const seconds = Math.round((Date.parse(iso) - Date.now()) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 45) return 'just now';
  if (abs < 3600) return relative.format(Math.round(seconds / 60), 'minute');
  if (abs < 86400) return relative.format(Math.round(seconds / 3600), 'hour');
  return relative.format(Math.round(seconds / 86400), 'day');
}

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'className') node.className = value;
    else if (name === 'text') node.textContent = value;
    else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) if (child !== null && child !== undefined) node.append(child);
  return node;
}

function timeCell(iso, extra) {
  if (!iso) return el('td', { text: 'Never', className: 'muted-cell' });
  return el(
    'td',
    {},
    el('time', { datetime: iso, title: dateFormat.format(new Date(iso)), text: ago(iso) }),
    extra ? el('span', { className: 'sub', text: extra }) : null,
  );
}

function lines(text) {
  return text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

let toastTimer;
function toast(message) {
  const node = $('toast');
  node.textContent = message;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (node.textContent = ''), 5000);
}

function showError(id, message) {
  const node = $(id);
  node.textContent = message ?? '';
  node.hidden = !message;
}

/** Shows an API validation error next to the field it is about (`allowedCidrs[1]` -> the IP textarea). */
function showFormError(prefix, err) {
  const fields = { allowedCidrs: 'cidrs', allowedDomains: 'domains', allowedOrigins: 'origins' };
  const field = err.param ? fields[err.param.replace(/\[\d+\]$/, '')] : undefined;
  if (field && $(`${prefix}-${field}-error`)) {
    showError(`${prefix}-${field}-error`, err.message);
    const input = $(`${prefix}-${field}`);
    input.setAttribute('aria-invalid', 'true');
    input.focus();
  } else {
    showError(`${prefix}-error`, err.message);
  }
}

function clearFormErrors(prefix) {
  for (const field of ['cidrs', 'domains', 'origins']) {
    const error = $(`${prefix}-${field}-error`);
    if (error) showError(`${prefix}-${field}-error`, '');
    $(`${prefix}-${field}`)?.removeAttribute('aria-invalid');
  }
  showError(`${prefix}-error`, '');
}

async function busy(button, work) {
  button.disabled = true;
  try {
    return await work();
  } finally {
    button.disabled = false;
  }
}

// ---------- views ----------

function showLogin(message) {
  state.operator = null;
  state.csrfToken = null;
  $('app-view').hidden = true;
  hideRequests();
  $('mfa-view').hidden = true;
  $('session-bar').hidden = true;
  $('login-code-field').hidden = true;
  $('login-code').value = '';
  $('login-view').hidden = false;
  showError('login-error', message && message !== 'Log in to the dashboard first.' ? message : '');
  $('login-email').focus();
}

/** After sign-in: the two-factor set-up when it is required and missing, the dashboard otherwise. */
async function enterSession(session) {
  if (session.mfaEnrolmentRequired) await showMfaSetup(session);
  else await enterApp(session);
}

async function enterApp(session) {
  state.operator = session.operator;
  state.csrfToken = session.csrfToken;
  $('login-view').hidden = true;
  $('mfa-view').hidden = true;
  $('app-view').hidden = false;
  $('session-bar').hidden = false;
  $('merchant-select').closest('label').hidden = false;
  $('operator-email').textContent = session.operator.email;
  $('mfa-button').hidden = session.operator.mfaEnabled;
  await loadMerchants();
  showPage();
}

/** Starts a set-up: the server makes a new secret, shown here once, confirmed by a first code. */
async function showMfaSetup(session) {
  state.operator = session.operator;
  state.csrfToken = session.csrfToken;
  state.mfaRequired = session.mfaEnrolmentRequired;
  $('login-view').hidden = true;
  $('app-view').hidden = true;
  hideRequests();
  $('mfa-view').hidden = false;
  $('session-bar').hidden = false;
  $('merchant-select').closest('label').hidden = true;
  $('mfa-button').hidden = true;
  $('operator-email').textContent = session.operator.email;
  $('mfa-intro').dataset.required = session.mfaEnrolmentRequired ? 'true' : 'false';
  $('mfa-setup').hidden = false;
  $('mfa-recovery').hidden = true;
  $('mfa-recovery-codes').replaceChildren();
  $('mfa-copy-status').textContent = '';
  showError('mfa-error', '');
  const { secret, otpauthUri } = await api('POST', '/mfa/enrolment');
  $('mfa-uri').textContent = otpauthUri;
  $('mfa-secret').textContent = secret.replace(/(.{4})/g, '$1 ').trim();
  $('mfa-code').focus();
}

async function loadMerchants() {
  const { merchants } = await api('GET', '/merchants');
  state.merchants = merchants;
  const select = $('merchant-select');
  select.replaceChildren(...merchants.map((m) => el('option', { value: m, text: m })));
  const platform = state.operator.merchantId === null;
  if (platform) select.append(el('option', { value: '__new__', text: 'New merchant…' }));
  select.disabled = !platform && merchants.length <= 1;
  const wanted = state.merchant && merchants.includes(state.merchant) ? state.merchant : merchants[0];
  if (wanted) {
    select.value = wanted;
    await openMerchant(wanted);
  } else {
    select.value = '__new__';
    $('new-merchant').hidden = false;
    state.merchant = null;
    $('merchant-title').textContent = 'no merchant yet';
    renderKeys();
    await loadAudit();
  }
}

async function openMerchant(merchantId) {
  state.merchant = merchantId;
  $('new-merchant').hidden = true;
  $('merchant-title').textContent = merchantId;
  await Promise.all([loadKeys(), loadAudit(), loadReturnUrls(), loadRequests(), loadPageInventory(), loadWebhooks(), loadRoutes()]);
}

async function loadKeys() {
  if (!state.merchant) return;
  const { keys } = await api('GET', `/keys?merchantId=${encodeURIComponent(state.merchant)}`);
  state.keys = keys;
  renderKeys();
}

/** A publishable key has origins only; a secret key has IP addresses and domains only. */
function showFieldsFor(prefix, kind) {
  const publishable = kind === 'publishable';
  $(`${prefix}-origins-field`).hidden = !publishable;
  $(`${prefix}-cidrs-field`).hidden = publishable;
  $(`${prefix}-domains-field`).hidden = publishable;
}

function restrictionsCell(key) {
  const parts = [];
  if (key.kind === 'publishable') {
    parts.push(
      el(
        'div',
        { className: 'restriction-line' },
        el('span', { className: 'chip-label', text: 'Origins' }),
        el(
          'span',
          { className: 'chips' },
          key.allowedOrigins.map((o) => el('span', { className: 'chip', text: o })),
        ),
      ),
    );
    return el('td', {}, parts);
  }
  if (key.allowedCidrs.length > 0) {
    parts.push(
      el(
        'div',
        { className: 'restriction-line' },
        el('span', { className: 'chip-label', text: 'IPs' }),
        el(
          'span',
          { className: 'chips' },
          key.allowedCidrs.map((c) => el('span', { className: 'chip', text: c })),
        ),
      ),
    );
  }
  if (key.allowedDomains.length > 0) {
    parts.push(
      el(
        'div',
        { className: 'restriction-line' },
        el('span', { className: 'chip-label', text: 'Domains' }),
        el(
          'span',
          { className: 'chips' },
          key.allowedDomains.map((d) => el('span', { className: 'chip', text: d })),
        ),
      ),
    );
  }
  if (parts.length === 0) parts.push(el('span', { className: 'muted-cell', text: 'None (any address)' }));
  return el('td', {}, parts);
}

const STATUS_LABELS = { active: 'Active', revoked: 'Revoked', expired: 'Expired' };

/** When it was revoked or expired; for an active key in an overlapping rotation, when it will expire. */
function statusSub(key) {
  if (key.revokedAt) return el('span', { className: 'sub', text: ago(key.revokedAt) });
  if (!key.expiresAt) return null;
  const label = key.status === 'expired' ? ago(key.expiresAt) : `Expires ${ago(key.expiresAt)}`;
  return el('span', { className: 'sub', text: label, title: dateFormat.format(new Date(key.expiresAt)) });
}

function renderKeys() {
  const body = $('keys-body');
  body.replaceChildren(
    ...state.keys.map((key) => {
      const active = key.status === 'active';
      const label = `key ${key.key}`;
      return el(
        'tr',
        { className: active ? '' : 'is-revoked', 'data-key-id': key.id },
        el('td', { className: 'key-cell' }, el('code', { text: key.key }), el('span', { className: 'sub', text: key.id })),
        el(
          'td',
          {},
          el('span', { className: `badge badge-${key.mode}`, text: key.mode === 'live' ? 'Live' : 'Test' }),
          key.kind === 'publishable' ? el('span', { className: 'sub', text: 'Publishable' }) : null,
        ),
        el(
          'td',
          {},
          el('span', { className: `badge badge-${active ? 'active' : 'revoked'}`, text: STATUS_LABELS[key.status] ?? key.status }),
          key.underAttackUntil ? el('span', { className: 'badge badge-attack', text: 'Under attack' }) : null,
          statusSub(key),
        ),
        restrictionsCell(key),
        timeCell(key.createdAt),
        timeCell(key.lastUsedAt, key.lastUsedIp ? `from ${key.lastUsedIp}` : null),
        el(
          'td',
          {},
          active
            ? el(
                'div',
                { className: 'actions' },
                el('button', {
                  type: 'button',
                  className: 'button button-small',
                  text: 'Edit',
                  'aria-label': `Edit restrictions of ${label}`,
                  onclick: (e) => openEdit(key, e.currentTarget),
                }),
                el('button', {
                  type: 'button',
                  className: 'button button-small',
                  text: 'Rotate',
                  'aria-label': `Rotate ${label}: create a replacement`,
                  onclick: () => startRotation(key),
                }),
                el('button', {
                  type: 'button',
                  className: 'button button-small button-ghost danger-text',
                  text: 'Revoke',
                  'aria-label': `Revoke ${label}`,
                  onclick: (e) => openRevoke(key, e.currentTarget),
                }),
              )
            : null,
        ),
      );
    }),
  );
  $('keys-empty').hidden = state.keys.length > 0;
  renderAttackBanner();
}

/**
 * The banner over the keys while any of them is under card-testing attack: which keys, what it
 * means for shoppers (nothing is refused; their browser does a little work per card), and until when.
 */
function renderAttackBanner() {
  const attacked = state.keys.filter((key) => key.underAttackUntil);
  $('attack-banner').hidden = attacked.length === 0;
  if (attacked.length === 0) return;
  const until = attacked.map((key) => Date.parse(key.underAttackUntil)).reduce((a, b) => Math.max(a, b));
  $('attack-banner-text').textContent =
    `${attacked.map((key) => key.key).join(', ')} ${attacked.length === 1 ? 'is' : 'are'} getting far more card ` +
    'tokenizations than usual. Checkouts go on: each card now needs a proof of work from the shopper’s browser, ' +
    `harder for the addresses sending the most, until at least ${dateFormat.format(new Date(until))}.`;
}

const ACTION_LABELS = {
  'login.succeeded': 'Signed in',
  'login.failed': 'Sign-in failed',
  'login.throttled': 'Sign-in blocked (too many attempts)',
  logout: 'Signed out',
  'mfa.enabled': 'Turned on two-factor',
  'mfa.reset': 'Reset two-factor (CLI)',
  'login.unlocked': 'Lifted sign-in lock (CLI)',
  'key.created': 'Created key',
  'key.updated': 'Changed restrictions',
  'key.revoked': 'Revoked key',
  'key.expiry_scheduled': 'Scheduled key expiry',
  'key.tested': 'Tested key',
  'merchant.return_urls_updated': 'Changed return URLs',
  'merchant.form_signing_secret_shown': 'Showed the return signing secret',
  'webhook_endpoint.created': 'Added webhook endpoint',
  'webhook_endpoint.deleted': 'Deleted webhook endpoint',
  'webhook_endpoint.secret_rotated': 'Rotated webhook secret',
  'webhook_endpoint.enabled': 'Enabled webhook endpoint',
  'webhook_delivery.resent': 'Resent webhook event',
  'route.applied': 'Applied proxy route',
  'route.deleted': 'Deleted proxy route',
};

function auditDetails(entry) {
  const d = entry.details ?? {};
  const list = (values) => (values && values.length > 0 ? values.join(', ') : 'any');
  switch (entry.action) {
    case 'key.created':
      if (d.kind === 'publishable') return `${d.mode} publishable · origins: ${list(d.allowedOrigins)}`;
      return `${d.mode} · IPs: ${list(d.allowedCidrs)} · domains: ${list(d.allowedDomains)}`;
    case 'key.updated':
      if (d.allowedOrigins) return `origins: ${list(d.allowedOrigins)}`;
      return `IPs: ${list(d.allowedCidrs)} · domains: ${list(d.allowedDomains)}`;
    case 'key.expiry_scheduled':
      return d.expiresAt ? `expires ${dateFormat.format(new Date(d.expiresAt))}` : '';
    case 'key.tested':
      return d.accepted
        ? `accepted${d.clientIp ? ` from ${d.clientIp}` : ''}`
        : `refused: ${d.code}${d.clientIp ? ` from ${d.clientIp}` : ''}`;
    case 'login.failed':
      return String(d.reason ?? '').replace(/_/g, ' ');
    case 'login.throttled':
      return `limit per ${d.limit}`;
    case 'login.succeeded':
      return d.factor === 'totp'
        ? 'with authenticator code'
        : d.factor === 'recovery_code'
          ? `with a recovery code (${d.recoveryCodesLeft} left)`
          : '';
    case 'webhook_endpoint.created':
      return `${d.mode} · ${d.url} · ${list(d.enabledEvents)}`;
    case 'webhook_endpoint.deleted':
      return `${d.mode} · ${d.url}`;
    case 'webhook_endpoint.secret_rotated':
      return `${d.mode} · ${d.endpointId}${d.previousSecretExpiresAt ? ` · old secret until ${dateFormat.format(new Date(d.previousSecretExpiresAt))}` : ''}`;
    case 'webhook_endpoint.enabled':
      return `${d.mode} · ${d.endpointId}`;
    case 'webhook_delivery.resent':
      return `${d.mode} · ${d.eventId} to ${d.endpointId}`;
    case 'route.applied':
      return `${d.routeId} · ${d.outcome}${d.changed && d.changed.length > 0 ? ` (${d.changed.join(', ')})` : ''}`;
    case 'route.deleted':
      return d.routeId ?? '';
    case 'mfa.reset':
    case 'login.unlocked':
      return d.operator ? `for ${d.operator}` : '';
    default:
      return '';
  }
}

async function loadAudit() {
  const query = state.merchant && state.operator.merchantId === null ? `&merchantId=${encodeURIComponent(state.merchant)}` : '';
  const { entries } = await api('GET', `/audit?limit=50${query}`);
  $('audit-body').replaceChildren(
    ...entries.map((entry) =>
      el(
        'tr',
        {},
        timeCell(entry.at),
        el('td', { text: entry.actor ?? 'unknown account' }),
        el('td', {}, el('code', { text: entry.ip ?? '—' })),
        el('td', { text: ACTION_LABELS[entry.action] ?? entry.action }),
        el('td', {}, entry.keyId ? el('code', { text: entry.keyId }) : '—'),
        el('td', { text: auditDetails(entry) }),
      ),
    ),
  );
}

// ---------- actions ----------

function startRotation(key) {
  const form = $('create-form');
  form.elements.mode.value = key.mode;
  form.elements.kind.value = key.kind;
  showFieldsFor('create', key.kind);
  $('create-cidrs').value = key.allowedCidrs.join('\n');
  $('create-domains').value = key.allowedDomains.join('\n');
  $('create-origins').value = key.allowedOrigins.join('\n');
  $('create-card').scrollIntoView({ behavior: 'smooth', block: 'start' });
  $('create-submit').focus();
  toast(`Step 1: create the replacement for ${key.key}. Mode and restrictions are copied.`);
}

function openEdit(key, opener) {
  state.editing = key;
  state.opener = opener;
  clearFormErrors('edit');
  $('edit-key-label').textContent = key.key;
  $('edit-cidrs').value = key.allowedCidrs.join('\n');
  $('edit-domains').value = key.allowedDomains.join('\n');
  $('edit-origins').value = key.allowedOrigins.join('\n');
  showFieldsFor('edit', key.kind);
  $('edit-dialog').showModal();
  $(key.kind === 'publishable' ? 'edit-origins' : 'edit-cidrs').focus();
}

function openRevoke(key, opener) {
  state.revoking = key;
  state.opener = opener;
  showError('revoke-error', '');
  $('revoke-key-label').textContent = key.key;
  $('revoke-dialog').showModal();
  $('revoke-cancel').focus();
}

function closeDialog(id) {
  $(id).close();
}

for (const id of ['edit-dialog', 'revoke-dialog']) {
  $(id).addEventListener('close', () => {
    if (state.opener && document.contains(state.opener)) state.opener.focus();
    state.opener = null;
  });
}

$('edit-cancel').addEventListener('click', () => closeDialog('edit-dialog'));
$('revoke-cancel').addEventListener('click', () => closeDialog('revoke-dialog'));

$('edit-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const key = state.editing;
  if (!key) return;
  clearFormErrors('edit');
  await busy($('edit-save'), async () => {
    try {
      await api(
        'PATCH',
        `/keys/${encodeURIComponent(key.id)}`,
        key.kind === 'publishable'
          ? { allowedOrigins: lines($('edit-origins').value) }
          : { allowedCidrs: lines($('edit-cidrs').value), allowedDomains: lines($('edit-domains').value) },
      );
      closeDialog('edit-dialog');
      toast(`Restrictions of ${key.key} saved. They apply from the next request.`);
      await Promise.all([loadKeys(), loadAudit()]);
    } catch (err) {
      showFormError('edit', err);
    }
  });
});

$('revoke-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const key = state.revoking;
  if (!key) return;
  await busy($('revoke-confirm'), async () => {
    try {
      await api('POST', `/keys/${encodeURIComponent(key.id)}/revoke`);
      closeDialog('revoke-dialog');
      toast(`${key.key} is revoked.`);
      await Promise.all([loadKeys(), loadAudit()]);
    } catch (err) {
      showError('revoke-error', err.message);
    }
  });
});

$('create-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  clearFormErrors('create');
  if (!state.merchant) {
    showError('create-error', 'Choose or create a merchant first.');
    return;
  }
  const form = event.currentTarget;
  await busy($('create-submit'), async () => {
    try {
      const kind = form.elements.kind.value;
      const restrictions =
        kind === 'publishable'
          ? { allowedOrigins: lines($('create-origins').value) }
          : { allowedCidrs: lines($('create-cidrs').value), allowedDomains: lines($('create-domains').value) };
      const { apiKey, key } = await api('POST', '/keys', {
        merchantId: state.merchant,
        kind,
        mode: form.elements.mode.value,
        ...restrictions,
      });
      form.reset();
      showFieldsFor('create', 'secret');
      if (!state.merchants.includes(state.merchant)) await loadMerchants();
      await Promise.all([loadKeys(), loadAudit()]).catch(() => undefined);
      // Shown once the list already holds the new key, so the page never contradicts itself.
      $('new-key-value').textContent = apiKey;
      $('copy-status').textContent = '';
      $('new-key').hidden = false;
      $('new-key').focus();
      toast(`Created ${key.key}.`);
    } catch (err) {
      showFormError('create', err);
    }
  });
});

for (const radio of $('create-form').elements.kind) {
  radio.addEventListener('change', () => {
    clearFormErrors('create');
    showFieldsFor('create', $('create-form').elements.kind.value);
  });
}

$('copy-key').addEventListener('click', async () => {
  const value = $('new-key-value').textContent;
  try {
    await navigator.clipboard.writeText(value);
    $('copy-status').textContent = 'Copied to the clipboard.';
  } catch {
    const range = document.createRange();
    range.selectNodeContents($('new-key-value'));
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    $('copy-status').textContent = 'Selected: press Ctrl+C (or ⌘C) to copy.';
  }
});

$('dismiss-key').addEventListener('click', () => {
  $('new-key-value').textContent = '';
  $('new-key').hidden = true;
  $('create-submit').focus();
});

$('test-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  showError('test-error', '');
  const form = event.currentTarget;
  const body = { apiKey: form.elements.apiKey.value.trim() };
  if (form.elements.clientIp.value.trim()) body.clientIp = form.elements.clientIp.value.trim();
  if (form.elements.origin.value.trim()) body.origin = form.elements.origin.value.trim();
  const result = $('test-result');
  await busy(form.querySelector('button[type=submit]'), async () => {
    try {
      const r = await api('POST', '/keys/test', body);
      const where = [r.clientIp ? `from ${r.clientIp}` : null, r.origin ? `on ${r.origin}` : null].filter(Boolean).join(' ');
      result.className = `test-result ${r.accepted ? 'ok' : 'refused'}`;
      result.replaceChildren(
        el('strong', { text: r.accepted ? `Accepted: the gateway answers ${r.status}` : `Refused: ${r.status} ${r.code}` }),
        el('p', {
          text: r.key
            ? `${r.key.key} (${r.key.mode}, merchant ${r.key.merchantId}, ${r.key.status}) — ${r.message} ${where ? `Checked as a request ${where}.` : ''}`
            : `${r.message}`,
        }),
      );
      result.hidden = false;
      await loadAudit();
    } catch (err) {
      showError('test-error', err.message);
    }
  });
});

$('login-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  showError('login-error', '');
  const form = event.currentTarget;
  await busy(form.querySelector('button[type=submit]'), async () => {
    const body = { email: form.elements.email.value, password: form.elements.password.value };
    const second = $('login-code-field').hidden ? '' : $('login-code').value.replace(/\s/g, '');
    // Six digits come from the app; anything else is taken for a recovery code.
    if (second) body[/^\d{6}$/.test(second) ? 'code' : 'recoveryCode'] = second;
    try {
      const session = await api('POST', '/login', body);
      form.reset();
      $('login-code-field').hidden = true;
      await enterSession(session);
      $('main').focus();
    } catch (err) {
      if (err.code === 'mfa_code_required' || err.code === 'mfa_code_invalid') {
        $('login-code-field').hidden = false;
        showError('login-error', err.code === 'mfa_code_required' ? 'Enter the code from your authenticator app.' : err.message);
        $('login-code').value = '';
        $('login-code').focus();
        return;
      }
      showError('login-error', err.message);
      $('login-password').select();
    }
  });
});

$('mfa-button').addEventListener('click', () => {
  showMfaSetup({ operator: state.operator, csrfToken: state.csrfToken, mfaEnrolmentRequired: false }).catch((err) => toast(err.message));
});

$('mfa-confirm-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  showError('mfa-error', '');
  const form = event.currentTarget;
  await busy(form.querySelector('button[type=submit]'), async () => {
    try {
      const result = await api('POST', '/mfa/enrolment/confirm', { code: $('mfa-code').value.replace(/\s/g, '') });
      form.reset();
      // The change ended every earlier session; this browser now holds a new one.
      state.pendingSession = result;
      state.csrfToken = result.csrfToken;
      $('mfa-setup').hidden = true;
      $('mfa-uri').textContent = '';
      $('mfa-secret').textContent = '';
      $('mfa-recovery-codes').replaceChildren(...result.recoveryCodes.map((code) => el('li', {}, el('code', { text: code }))));
      $('mfa-recovery').hidden = false;
      $('mfa-recovery').focus();
    } catch (err) {
      showError('mfa-error', err.message);
      $('mfa-code').select();
    }
  });
});

async function copyText(id) {
  try {
    await navigator.clipboard.writeText($(id).textContent.replace(/\s/g, ''));
    $('mfa-copy-status').textContent = 'Copied to the clipboard.';
  } catch {
    const range = document.createRange();
    range.selectNodeContents($(id));
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    $('mfa-copy-status').textContent = 'Selected: press Ctrl+C (or ⌘C) to copy.';
  }
}
$('copy-mfa-uri').addEventListener('click', () => copyText('mfa-uri'));
$('copy-mfa-secret').addEventListener('click', () => copyText('mfa-secret'));

$('mfa-done').addEventListener('click', async () => {
  const session = state.pendingSession;
  state.pendingSession = null;
  $('mfa-recovery-codes').replaceChildren();
  $('mfa-recovery').hidden = true;
  await enterApp(session);
  toast('Two-factor authentication is on.');
});

$('logout-button').addEventListener('click', async () => {
  try {
    await api('POST', '/logout');
  } finally {
    state.merchant = null;
    showLogin();
  }
});

$('merchant-select').addEventListener('change', async (event) => {
  const value = event.currentTarget.value;
  if (value === '__new__') {
    $('new-merchant').hidden = false;
    $('new-merchant-id').focus();
    return;
  }
  await openMerchant(value);
});

$('new-merchant-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const id = $('new-merchant-id').value.trim();
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(id)) {
    $('new-merchant-id').setAttribute('aria-invalid', 'true');
    toast('A merchant id is 1-64 letters, digits, "_", "." or "-".');
    return;
  }
  $('new-merchant-id').removeAttribute('aria-invalid');
  const select = $('merchant-select');
  if (![...select.options].some((o) => o.value === id)) select.insertBefore(el('option', { value: id, text: id }), select.lastChild);
  select.value = id;
  $('new-merchant-id').value = '';
  await openMerchant(id);
  $('create-submit').focus();
});

$('refresh-keys').addEventListener('click', () => loadKeys().catch((err) => toast(err.message)));
$('refresh-audit').addEventListener('click', () => loadAudit().catch((err) => toast(err.message)));

initReturnUrls({ api, merchant: () => state.merchant, toast });
initRequests({ api, merchant: () => state.merchant, el });
initPageInventory({ api, merchant: () => state.merchant, el, toast });
initWebhooks({ api, merchant: () => state.merchant, el, toast });
initRoutes({ api, merchant: () => state.merchant, el, toast });

async function boot() {
  try {
    const session = await api('GET', '/session');
    await enterSession(session);
  } catch (err) {
    showLogin(err.code === 'admin_session_required' ? '' : err.message);
  }
}

void boot();

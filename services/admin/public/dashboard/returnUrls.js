/* global document */
// Hosted payment page settings of the dashboard: the merchant's registered return and cancel URLs
// and the secret that signs the page's redirects. Its own module (the key screens are in
// dashboard.js); it gets the API helper and the current merchant from there.

const $ = (id) => document.getElementById(id);

let deps = null;

function showError(id, message) {
  const node = $(id);
  node.textContent = message ?? '';
  node.hidden = !message;
}

function lines(text) {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

/** Shows the merchant's URLs; called whenever the dashboard opens a merchant. */
export async function loadReturnUrls() {
  const merchantId = deps?.merchant();
  $('return-urls-card').hidden = !merchantId;
  if (!merchantId) return;
  showError('return-urls-error', '');
  $('signing-secret').hidden = true;
  $('signing-secret-value').textContent = '';
  const view = await deps.api('GET', `/merchants/${encodeURIComponent(merchantId)}/return-urls`);
  $('return-urls').value = view.returnUrls.join('\n');
  $('return-urls').removeAttribute('aria-invalid');
}

export function initReturnUrls({ api, merchant, toast }) {
  deps = { api, merchant };
  $('return-urls-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const button = $('return-urls-save');
    showError('return-urls-error', '');
    $('return-urls').removeAttribute('aria-invalid');
    button.disabled = true;
    try {
      const view = await api('PUT', `/merchants/${encodeURIComponent(merchant())}/return-urls`, {
        returnUrls: lines($('return-urls').value),
      });
      $('return-urls').value = view.returnUrls.join('\n');
      toast(view.returnUrls.length > 0 ? 'Return URLs saved.' : 'Return URLs removed: new form sessions are refused.');
    } catch (err) {
      showError('return-urls-error', err.message);
      $('return-urls').setAttribute('aria-invalid', 'true');
      $('return-urls').focus();
    } finally {
      button.disabled = false;
    }
  });
  $('signing-secret-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const button = $('signing-secret-show');
    showError('return-urls-error', '');
    button.disabled = true;
    try {
      const mode = $('signing-secret-mode').value;
      const shown = await api('POST', `/merchants/${encodeURIComponent(merchant())}/form-signing-secret`, { mode });
      $('signing-secret-value').textContent = shown.signingSecret;
      $('signing-secret').hidden = false;
    } catch (err) {
      showError('return-urls-error', err.message);
    } finally {
      button.disabled = false;
    }
  });
}

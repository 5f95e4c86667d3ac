// API keys: created (the clear key shown once) and revoked, through the admin API.
import { element, row } from './api.js';

export function setupKeys(api, report) {
  const form = document.getElementById('key-form');
  const error = document.getElementById('key-tenant-error');
  const input = document.getElementById('key-tenant');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    input.removeAttribute('aria-invalid');
    try {
      const created = await api.call('POST', '/keys', { tenant: input.value.trim() });
      const box = document.getElementById('new-key');
      box.replaceChildren(
        element('span', `New key ${created.id} for tenant ${created.tenant}: `),
        element('code', created.key, { id: 'new-key-value' }),
        element('span', ' Copy it now: it is shown only this once and never stored in clear.'),
      );
      box.hidden = false;
      await loadKeys(api, report);
    } catch (failure) {
      if (failure.status !== 0) {
        error.textContent = `tenant: ${failure.message}`;
        input.setAttribute('aria-invalid', 'true');
      }
      report(failure);
    }
  });
  document.querySelector('#keys tbody').addEventListener('click', async (event) => {
    const button = event.target.closest('button[data-revoke]');
    if (!button) return;
    const id = button.dataset.revoke;
    if (!window.confirm(`Revoke key ${id}? Requests with it are refused within a second or two.`)) return;
    try {
      await api.call('DELETE', `/keys/${encodeURIComponent(id)}`);
      await loadKeys(api, report);
    } catch (failure) {
      report(failure);
    }
  });
  return {
    load: () => loadKeys(api, report),
    clear() {
      const box = document.getElementById('new-key');
      box.replaceChildren();
      box.hidden = true;
      document.querySelector('#keys tbody').replaceChildren();
      form.reset();
      error.textContent = '';
    },
  };
}

async function loadKeys(api, report) {
  try {
    const { keys } = await api.call('GET', '/keys');
    const tbody = document.querySelector('#keys tbody');
    if (keys.length === 0) {
      tbody.replaceChildren(row(['no keys stored', '', '', '', '']));
      return;
    }
    tbody.replaceChildren(...keys.map(keyRow));
  } catch (failure) {
    report(failure);
  }
}

function keyRow(key) {
  const revoked = Boolean(key.revokedAt);
  const action = revoked ? '' : element('button', 'Revoke', { type: 'button', 'data-revoke': key.id, 'aria-label': `Revoke key ${key.id} of tenant ${key.tenant}` });
  const tr = row([key.id, key.tenant, key.createdAt, revoked ? `revoked ${key.revokedAt}` : 'active', action]);
  tr.dataset.key = key.id;
  tr.dataset.state = revoked ? 'revoked' : 'active';
  return tr;
}

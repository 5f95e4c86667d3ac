// Named admin tokens, for an `admin` token only: created with a role (the clear
// token shown once, emptied at sign-out), listed, revoked, through the admin
// API. Other roles never see the section (app.css) nor call /tokens, which
// the API refuses them anyway (403).
import { element, row } from './api.js';

const isAdmin = () => document.body.dataset.role === 'admin';

export function setupTokens(api, report) {
  const form = document.getElementById('token-form');
  const error = document.getElementById('token-form-error');
  const box = document.getElementById('new-token');
  const tbody = document.querySelector('#tokens tbody');
  const load = async () => {
    if (!isAdmin()) return;
    try {
      const { tokens } = await api.call('GET', '/tokens');
      tbody.replaceChildren(...(tokens.length === 0 ? [row(['no named tokens', '', '', ''])] : tokens.map(tokenRow)));
    } catch (failure) {
      report(failure);
    }
  };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    try {
      const name = document.getElementById('token-name').value.trim();
      const created = await api.call('POST', '/tokens', { name, role: document.getElementById('token-role').value });
      box.replaceChildren(
        element('span', `New ${created.role} token ${created.name}: `),
        element('code', created.token, { id: 'new-token-value' }),
        element('span', ' Copy it now: it is shown only this once and stored only hashed.'),
      );
      box.hidden = false;
      form.reset();
      await load();
    } catch (failure) {
      if (failure.status !== 0) error.textContent = `${failure.field ?? 'token'}: ${failure.message}`;
      report(failure);
    }
  });
  tbody.addEventListener('click', async (event) => {
    const button = event.target.closest('button[data-revoke-token]');
    if (!button) return;
    const name = button.dataset.revokeToken;
    if (!window.confirm(`Revoke token ${name}? Every instance sharing the rule store refuses it within a second.`)) return;
    try {
      await api.call('DELETE', `/tokens/${encodeURIComponent(name)}`);
      await load();
    } catch (failure) {
      report(failure);
    }
  });
  return {
    load,
    clear() {
      box.replaceChildren();
      box.hidden = true;
      tbody.replaceChildren();
      form.reset();
      error.textContent = '';
    },
  };
}

function tokenRow(token) {
  const revoke = element('button', 'Revoke', { type: 'button', 'data-revoke-token': token.name, 'aria-label': `Revoke token ${token.name}` });
  const tr = row([token.name, token.role, token.createdAt, revoke]);
  tr.dataset.token = token.name;
  return tr;
}

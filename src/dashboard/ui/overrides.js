// Per-key overrides of a limit's rule (per IP, CIDR range, header value or
// tenant): listed, added, edited and removed through the admin API
// (/overrides, /limits/{limitId}/overrides/{selector}).
import { element, row } from './api.js';

const EXAMPLE_RULE = '{ "policy": "token_bucket", "capacity": 100, "refillPerSecond": 10 }';
const KIND_OF = { ip: 'IP address or CIDR range', header: 'header value (stored hashed)', tenant: 'tenant' };
let overrides = [];

export function setupOverrides(api, report) {
  const form = document.getElementById('override-form');
  const status = document.getElementById('override-status');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors();
    const limitId = field('limit').value.trim();
    const selector = `${field('kind').value}:${field('value').value.trim()}`;
    let rule;
    try {
      rule = JSON.parse(field('rule').value);
    } catch (error) {
      return showError('rule', `not valid JSON: ${error.message}`);
    }
    try {
      const saved = await api.call('PUT', overridePath(limitId, selector), rule);
      status.textContent = `Saved: limit ${saved.limitId}, ${saved.selector}.`;
      await load(api, report);
    } catch (error) {
      showApiError(error);
      report(error);
    }
  });
  document.querySelector('#overrides tbody').addEventListener('click', (event) => onAction(event, api, report));
  return {
    load: () => load(api, report),
    clear() {
      overrides = [];
      document.querySelector('#overrides tbody').replaceChildren();
      form.reset();
      field('rule').value = EXAMPLE_RULE;
      clearErrors();
      status.textContent = '';
    },
  };
}

const field = (name) => document.getElementById(`override-${name}`);
const overridePath = (limitId, selector) => `/limits/${encodeURIComponent(limitId)}/overrides/${encodeURIComponent(selector)}`;

async function load(api, report) {
  try {
    overrides = (await api.call('GET', '/overrides')).overrides;
    const tbody = document.querySelector('#overrides tbody');
    tbody.replaceChildren(...(overrides.length === 0 ? [row(['no overrides stored', '', '', '', '', ''])] : overrides.map(overrideRow)));
  } catch (error) {
    report(error);
  }
}

function overrideRow(stored, index) {
  const kind = stored.selector.slice(0, stored.selector.indexOf(':'));
  const actions = element('span', undefined, { 'data-needs': 'write' });
  actions.append(
    element('button', 'Edit', { type: 'button', 'data-edit': String(index), 'aria-label': `Edit the override of ${stored.limitId} for ${stored.selector}` }),
    ' ',
    element('button', 'Remove', { type: 'button', 'data-remove': String(index), 'aria-label': `Remove the override of ${stored.limitId} for ${stored.selector}` }),
  );
  return row([stored.limitId, KIND_OF[kind] ?? kind, stored.selector.slice(kind.length + 1), ruleText(stored.rule), stored.updatedAt.replace('T', ' ').slice(0, 19), actions]);
}

function ruleText(rule) {
  const mode = rule.shadow ? ' (shadow)' : '';
  if (rule.capacity !== undefined) return `${rule.policy}: ${rule.capacity}, refill ${rule.refillPerSecond}/s${mode}`;
  if (rule.calendar !== undefined) return `${rule.policy}: ${rule.limit} per ${rule.calendar.unit} in ${rule.calendar.timeZone}${mode}`;
  if (rule.limit !== undefined) return `${rule.policy}: ${rule.limit} per ${rule.windowMs} ms${mode}`;
  return `${rule.policy}: ${rule.ratePerSecond}/s, burst ${rule.burst}${mode}`;
}

async function onAction(event, api, report) {
  const button = event.target.closest('button');
  const stored = button && overrides[Number(button.dataset.edit ?? button.dataset.remove)];
  if (!stored) return;
  if (button.dataset.edit !== undefined) {
    const kind = stored.selector.slice(0, stored.selector.indexOf(':'));
    field('limit').value = stored.limitId;
    field('kind').value = kind;
    field('value').value = stored.selector.slice(kind.length + 1);
    field('rule').value = JSON.stringify(stored.rule);
    field('rule').focus();
    return;
  }
  if (!window.confirm(`Remove the override of limit ${stored.limitId} for ${stored.selector}?`)) return;
  try {
    await api.call('DELETE', overridePath(stored.limitId, stored.selector));
    document.getElementById('override-status').textContent = `Removed: limit ${stored.limitId}, ${stored.selector}.`;
    await load(api, report);
  } catch (error) {
    report(error);
  }
}

function clearErrors() {
  for (const node of document.querySelectorAll('#override-form .field-error')) node.textContent = '';
  for (const input of document.querySelectorAll('#override-form [aria-invalid]')) input.removeAttribute('aria-invalid');
}

function showError(name, message) {
  document.getElementById(`override-${name}-error`).textContent = message;
  field(name).setAttribute('aria-invalid', 'true');
  field(name).focus();
}

/** `limitId` → the limit field; `selector` → the value; `body.*` → the rule; anything else above the button. */
function showApiError(error) {
  if (error.status === 0) return;
  const name = error.field === 'limitId' ? 'limit' : error.field === 'selector' ? 'value' : error.field?.startsWith('body') ? 'rule' : undefined;
  if (name) showError(name, `${error.field}: ${error.message}`);
  else document.getElementById('override-form-error').textContent = `${error.field ? `${error.field}: ` : ''}${error.message}`;
}

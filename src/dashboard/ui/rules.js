// The rule table (search, edit, delete) and the rule form, through the admin
// API. The API's validation message is shown next to the field it names.
import { element, row } from './api.js';

let rules = [];
let overview;

export function setupRules(api, report) {
  const form = document.getElementById('rule-form');
  const policy = document.getElementById('rule-policy');
  policy.addEventListener('change', showPolicyFields);
  showPolicyFields();
  document.getElementById('rule-search').addEventListener('input', render);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors();
    const tenant = value('tenant');
    const route = value('route');
    const status = document.getElementById('rule-form-status');
    status.textContent = '';
    try {
      await api.call('PUT', `/rules/${encodeURIComponent(tenant)}/${encodeURIComponent(route)}`, ruleFromForm());
      await loadRules(api, report);
      status.textContent = `Saved the rule for tenant ${tenant} on route ${route}${await whoSees(api)}`;
    } catch (error) {
      showFieldError(error);
      report(error);
    }
  });
  return {
    load: () => loadRules(api, report),
    setOverview,
    clear() {
      rules = [];
      document.querySelector('#rules tbody').replaceChildren();
      form.reset();
      clearErrors();
      document.getElementById('rule-form-status').textContent = '';
    },
  };
}

/** Which store the page edits, and so who sees a change (/readyz names it). */
async function whoSees(api) {
  const kind = await api.call('GET', '/readyz').then((health) => health?.store?.kind, (error) => error.data?.store?.kind);
  if (kind === 'postgres') return ' in PostgreSQL: every instance on that database applies it within a second or two.';
  if (kind === 'embedded') return " in this instance's embedded store: this instance applies it at once; instances with stores of their own never see it (share a PostgreSQL database for one set of rules).";
  return '.';
}

export async function loadRules(api, report) {
  try {
    rules = (await api.call('GET', '/rules')).rules;
    render();
  } catch (error) {
    report(error);
  }
}

function setOverview(next) {
  overview = next;
  if (rules.some((stored) => stored.rule.shadow)) render();
}

function render() {
  const query = document.getElementById('rule-search').value.trim().toLowerCase();
  const shown = rules.filter((stored) => `${stored.tenant} ${stored.route} ${stored.rule.policy}`.toLowerCase().includes(query));
  const tbody = document.querySelector('#rules tbody');
  if (shown.length === 0) {
    tbody.replaceChildren(row([rules.length === 0 ? 'no rules stored' : 'no rule matches the search', '', '', '', '', '']));
    return;
  }
  tbody.replaceChildren(...shown.map(ruleRow));
}

function ruleRow(stored) {
  const { tenant, route, rule } = stored;
  const actions = element('span');
  const edit = element('button', 'Edit', { type: 'button', 'aria-label': `Edit the rule for tenant ${tenant} on route ${route}` });
  edit.addEventListener('click', () => fillForm(stored));
  const remove = element('button', 'Delete', { type: 'button', 'aria-label': `Delete the rule for tenant ${tenant} on route ${route}` });
  remove.dataset.action = 'delete';
  actions.append(edit, ' ', remove);
  const tr = row([tenant, route, rule.policy, limitOf(rule), rule.shadow ? `shadow: would have refused ${wouldRefuse(tenant, route)} in the last minutes` : 'enforced', actions]);
  tr.dataset.rule = `${tenant}/${route}`;
  return tr;
}

/** Delete is wired by the caller, which knows the API. */
export function onDelete(api, report) {
  document.querySelector('#rules tbody').addEventListener('click', async (event) => {
    const button = event.target.closest('button[data-action="delete"]');
    if (!button) return;
    const [tenant, route] = button.closest('tr').dataset.rule.split('/');
    if (!window.confirm(`Delete the rule for tenant ${tenant} on route ${route}?`)) return;
    try {
      await api.call('DELETE', `/rules/${encodeURIComponent(tenant)}/${encodeURIComponent(route)}`);
      await loadRules(api, report);
      document.getElementById('rule-form-status').textContent = `Deleted the rule for tenant ${tenant} on route ${route}.`;
    } catch (error) {
      report(error);
    }
  });
}

function wouldRefuse(tenant, route) {
  if (!overview) return 0;
  if (tenant === '*') return (overview.routes[route]?.shadowRefused ?? []).reduce((a, b) => a + b, 0);
  return overview.shadowTop.filter((e) => e.tenant === tenant && (route === '*' || e.route === route)).reduce((a, e) => a + e.count, 0);
}

function limitOf(rule) {
  if (rule.capacity !== undefined) return `${rule.capacity}, refill ${rule.refillPerSecond}/s`;
  if (rule.calendar !== undefined) return `${rule.limit} per ${rule.calendar.unit} in ${rule.calendar.timeZone}${rule.calendar.anchor === undefined ? '' : `, anchor ${rule.calendar.anchor}`}`;
  if (rule.limit !== undefined) return `${rule.limit} per ${rule.windowMs} ms`;
  return `${rule.ratePerSecond}/s, burst ${rule.burst}`;
}

function fillForm({ tenant, route, rule }) {
  document.getElementById('rule-tenant').value = tenant;
  document.getElementById('rule-route').value = route;
  document.getElementById('rule-policy').value = rule.policy;
  // The parameter fields are the server's, from the policy registry (dashboard/policy-form.ts).
  for (const field of document.querySelectorAll('#rule-form [data-policies]')) document.getElementById(`rule-${field.dataset.field}`).value = rule[field.dataset.field] ?? '';
  document.getElementById('rule-shadow').checked = rule.shadow === true;
  showPolicyFields();
  clearErrors();
  document.getElementById('rule-tenant').focus();
}

function showPolicyFields() {
  const policy = document.getElementById('rule-policy').value;
  for (const field of document.querySelectorAll('#rule-form [data-policies]')) field.hidden = !field.dataset.policies.split(' ').includes(policy);
}

function value(name) {
  return document.getElementById(`rule-${name}`).value.trim();
}

function ruleFromForm() {
  const policy = value('policy');
  const rule = { policy };
  for (const field of document.querySelectorAll('#rule-form [data-policies]')) {
    const name = field.dataset.field;
    const text = value(name);
    if (field.hidden || text === '') continue;
    rule[name] = Number.isNaN(Number(text)) ? text : Number(text);
  }
  if (document.getElementById('rule-shadow').checked) rule.shadow = true;
  return rule;
}

function clearErrors() {
  for (const node of document.querySelectorAll('#rule-form .field-error')) node.textContent = '';
  for (const input of document.querySelectorAll('#rule-form [aria-invalid]')) input.removeAttribute('aria-invalid');
}

/** `body.capacity` → the capacity field; `tenant`, `route` → theirs; anything else above the button. */
function showFieldError(error) {
  if (error.status === 0) return;
  const name = (error.field ?? '').replace(/^body\.?/, '').split('.')[0];
  const target = name && document.getElementById(`rule-${name}-error`);
  const input = name && document.getElementById(`rule-${name}`);
  if (target && input && !input.closest('[hidden]')) {
    target.textContent = `${name}: ${error.message}`;
    input.setAttribute('aria-invalid', 'true');
    input.setAttribute('aria-describedby', target.id);
    input.focus();
  } else {
    document.getElementById('rule-form-error').textContent = `${error.field ? `${error.field}: ` : ''}${error.message}`;
  }
}

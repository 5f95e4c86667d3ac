// Plans (docs/plans.md): listed with their limits and how many tenants and
// keys are on each; made, given limits and deleted, and tenants or keys put on
// a plan, through the admin API (/plans, /assignments). The section builds its
// own markup inside <section id="plans-section">, so the page's HTML holds one
// line for it. Its labels share no words with the other sections' (the
// browser tests find fields by label).
import { element, row } from './api.js';

const EXAMPLE_RULE = '{ "policy": "token_bucket", "capacity": 100, "refillPerSecond": 10 }';
let plans = [];

export function setupPlans(api, report) {
  const section = document.getElementById('plans-section');
  section.setAttribute('aria-labelledby', 'plans-title');
  section.replaceChildren(...markup());
  const status = document.getElementById('plan-status');
  const submit = (id, work) =>
    document.getElementById(id).addEventListener('submit', async (event) => {
      event.preventDefault();
      document.getElementById('plan-error').textContent = '';
      try {
        status.textContent = await work();
        await load(api, report);
      } catch (error) {
        if (error instanceof SyntaxError) document.getElementById('plan-error').textContent = `rule: not valid JSON: ${error.message}`;
        else {
          if (error.status !== 0) document.getElementById('plan-error').textContent = `${error.field ? `${error.field}: ` : ''}${error.message}`;
          report(error);
        }
      }
    });
  submit('plan-create-form', async () => `Created plan ${(await api.call('POST', '/plans', { name: value('plan-name') })).name}.`);
  submit('plan-limit-form', async () => {
    const scope = value('plan-scope');
    const path = scope === 'global' ? 'global' : `${scope}/${encodeURIComponent(value('plan-target'))}`;
    const saved = await api.call('PUT', `${planPath(value('plan-limit-plan'))}/limits/${path}`, JSON.parse(value('plan-rule')));
    return `Saved: plan ${saved.plan}, ${saved.scope} ${saved.target}.`;
  });
  submit('plan-assign-form', async () => {
    const done = await api.call('PUT', `/assignments/${value('plan-subject')}/${encodeURIComponent(value('plan-subject-id'))}`, { plan: value('plan-assign-plan') });
    return `${done.subject} ${done.id} is on plan ${done.plan}.`;
  });
  document.querySelector('#plans tbody').addEventListener('click', (event) => onDelete(event, api, report));
  return {
    load: () => load(api, report),
    clear() {
      plans = [];
      document.querySelector('#plans tbody').replaceChildren();
      for (const form of section.querySelectorAll('form')) form.reset();
      document.getElementById('plan-rule').value = EXAMPLE_RULE;
      document.getElementById('plan-error').textContent = '';
      status.textContent = '';
    },
  };
}

const value = (id) => document.getElementById(id).value.trim();
const planPath = (name) => `/plans/${encodeURIComponent(name)}`;

function field(id, label, control = element('input', undefined, { id, required: '' })) {
  const wrap = element('div', undefined, { class: 'field' });
  wrap.append(element('label', label, { for: id }), control);
  return wrap;
}

function select(id, options) {
  const node = element('select', undefined, { id });
  for (const [option, label] of options) node.append(element('option', label, { value: option }));
  return node;
}

function form(id, title, fields, button) {
  const node = element('form', undefined, { id, novalidate: '', 'data-needs': 'write' });
  const box = element('div', undefined, { class: 'fields' });
  box.append(...fields);
  node.append(element('h3', title), box, element('button', button, { type: 'submit' }));
  return node;
}

function markup() {
  const table = element('table', undefined, { id: 'plans' });
  const head = element('thead');
  head.append(row(['Plan', 'Limits', 'On it', 'Actions']));
  for (const cell of head.querySelectorAll('td')) cell.replaceWith(element('th', cell.textContent, { scope: 'col' }));
  table.append(element('caption', 'Plans in the rule store'), head, element('tbody'));
  const rule = element('textarea', EXAMPLE_RULE, { id: 'plan-rule', rows: '2', cols: '60' });
  return [
    element('h2', 'Plans', { id: 'plans-title' }),
    element('p', "A plan is a named set of limits; a tenant or an API key is put on one. A tenant's own rule or an override comes first, then its plan's limit, then the default.", { class: 'hint' }),
    table,
    form('plan-create-form', 'New plan', [field('plan-name', 'New plan name')], 'Create plan'),
    form('plan-limit-form', "Set a plan's limit", [
      field('plan-limit-plan', 'Plan to change'),
      field('plan-scope', 'Scope of the limit', select('plan-scope', [['global', 'every route'], ['route', 'one route'], ['limit', 'one limit id']])),
      field('plan-target', 'Route or limit (its id; empty for every route)', element('input', undefined, { id: 'plan-target' })),
      field('plan-rule', 'Plan limit (JSON, as for PUT /rules)', rule),
    ], 'Save limit'),
    form('plan-assign-form', 'Put a tenant or key on a plan', [
      field('plan-assign-plan', 'Plan to put it on'),
      field('plan-subject', 'Tenant or API key', select('plan-subject', [['tenant', 'tenant'], ['key', 'API key (its id)']])),
      field('plan-subject-id', 'Its id (of the tenant or the key)'),
    ], 'Assign'),
    element('p', '', { class: 'field-error', id: 'plan-error', role: 'alert' }),
    element('p', '', { id: 'plan-status', role: 'status' }),
  ];
}

async function load(api, report) {
  try {
    plans = (await api.call('GET', '/plans')).plans;
    const counts = await Promise.all(plans.map(async (plan) => (await api.call('GET', `${planPath(plan.name)}/assignments`)).assignments.length));
    const tbody = document.querySelector('#plans tbody');
    tbody.replaceChildren(...(plans.length === 0 ? [row(['no plans stored', '', '', ''])] : plans.map((plan, i) => planRow(plan, counts[i]))));
  } catch (error) {
    report(error);
  }
}

function planRow(plan, count, index = plans.indexOf(plan)) {
  const limits = plan.limits.map((limit) => `${limit.scope === 'global' ? 'every route' : `${limit.scope} ${limit.target}`}: ${JSON.stringify(limit.rule)}`).join('; ') || 'no limits';
  const remove = element('button', 'Delete', { type: 'button', 'data-remove': String(index), 'data-needs': 'write', 'aria-label': `Delete plan ${plan.name}` });
  return row([plan.name, limits, count, remove]);
}

async function onDelete(event, api, report) {
  const button = event.target.closest('button');
  const plan = button && plans[Number(button.dataset.remove)];
  if (!plan || !window.confirm(`Delete plan ${plan.name}?`)) return;
  try {
    await api.call('DELETE', planPath(plan.name));
    document.getElementById('plan-status').textContent = `Deleted plan ${plan.name}.`;
    await load(api, report);
  } catch (error) {
    document.getElementById('plan-error').textContent = error.message;
    report(error);
  }
}

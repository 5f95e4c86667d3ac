// Allow and deny lists (docs/lists.md): the rule store's entries listed, added
// and deleted through the admin API (/lists). The config file's entries are
// not shown here (they are in the file). The section builds its own markup
// inside <section id="lists-section">, so the page's HTML holds one line for
// it; its labels share no words with the other sections' (the browser tests
// find fields by label).
import { element, row } from './api.js';

let entries = [];

export function setupLists(api, report) {
  const section = document.getElementById('lists-section');
  section.setAttribute('aria-labelledby', 'lists-title');
  section.replaceChildren(...markup());
  const status = document.getElementById('list-status');
  const error = document.getElementById('list-error');
  document.getElementById('list-add-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    try {
      const added = await api.call('POST', '/lists', entryFromForm());
      status.textContent = `Added ${added.action} entry ${added.id}.`;
      await load(api, report);
    } catch (failure) {
      if (failure.status !== 0) error.textContent = `${failure.field ? `${failure.field}: ` : ''}${failure.message}`;
      report(failure);
    }
  });
  document.querySelector('#list-entries tbody').addEventListener('click', (event) => onDelete(event, api, report));
  return {
    load: () => load(api, report),
    clear() {
      entries = [];
      document.querySelector('#list-entries tbody').replaceChildren();
      document.getElementById('list-add-form').reset();
      error.textContent = '';
      status.textContent = '';
    },
  };
}

const value = (id) => document.getElementById(id).value.trim();

/** The admin API's body from the form; the API checks every field and names a refused one. */
function entryFromForm() {
  const kind = value('list-kind');
  const given = value('list-match');
  const eq = given.indexOf('=');
  const match = kind === 'header' || kind === 'claim' ? { name: eq < 0 ? given : given.slice(0, eq), value: eq < 0 ? '' : given.slice(eq + 1) } : given;
  const body = { action: value('list-action'), [kind]: match };
  const routes = value('list-routes');
  if (routes !== '') body.routes = routes.split(',').map((route) => route.trim()).filter((route) => route !== '');
  for (const [id, field] of [['list-limit', 'limit'], ['list-expires', 'expiresAt'], ['list-note', 'note']]) if (value(id) !== '') body[field] = value(id);
  return body;
}

function field(id, label, control = element('input', undefined, { id })) {
  const wrap = element('div', undefined, { class: 'field' });
  wrap.append(element('label', label, { for: id }), control);
  return wrap;
}

function select(id, options) {
  const node = element('select', undefined, { id });
  for (const [option, label] of options) node.append(element('option', label, { value: option }));
  return node;
}

/** A table wider than the window scrolls inside its box, not the page. */
function scrolling(table) {
  const box = element('div', undefined, { class: 'scroll' });
  box.append(table);
  return box;
}

function markup() {
  const table = element('table', undefined, { id: 'list-entries' });
  const head = element('thead');
  head.append(row(['Entry', 'Does', 'Matches', 'Where', 'Why', 'Actions']));
  for (const cell of head.querySelectorAll('td')) cell.replaceWith(element('th', cell.textContent, { scope: 'col' }));
  table.append(element('caption', 'Allow and deny entries in the rule store'), head, element('tbody'));
  const form = element('form', undefined, { id: 'list-add-form', novalidate: '', 'data-needs': 'write' });
  const box = element('div', undefined, { class: 'fields' });
  box.append(
    field('list-action', 'Allow or deny', select('list-action', [['deny', 'deny (403)'], ['allow', 'allow (no limit)']])),
    field('list-kind', 'Matched by', select('list-kind', [['cidr', 'address or network'], ['tenant', 'tenant'], ['header', 'header name=value'], ['claim', 'JWT claim name=value']])),
    field('list-match', 'Who it matches (203.0.113.0/24, a tenant, or name=text)', element('input', undefined, { id: 'list-match', required: '' })),
    field('list-routes', 'Only on these routes (comma-separated; empty: all)'),
    field('list-limit', 'Lift only this limit (allow; its id)'),
    field('list-expires', 'Stops applying at (ISO time; empty: never)'),
    field('list-note', 'Reason, for operators'),
  );
  form.append(element('h3', 'New list entry'), box, element('button', 'Add entry', { type: 'submit' }));
  return [
    element('h2', 'Allow and deny lists', { id: 'lists-title' }),
    element('p', 'A deny entry answers 403 before any limit; an allow entry lifts every limit, or only the one it names. Header and claim values are kept only as their SHA-256.', { class: 'hint' }),
    scrolling(table),
    form,
    element('p', '', { class: 'field-error', id: 'list-error', role: 'alert' }),
    element('p', '', { id: 'list-status', role: 'status' }),
  ];
}

async function load(api, report) {
  try {
    entries = (await api.call('GET', '/lists')).entries;
    const tbody = document.querySelector('#list-entries tbody');
    tbody.replaceChildren(...(entries.length === 0 ? [row(['no entries stored', '', '', '', '', ''])] : entries.map(entryRow)));
  } catch (error) {
    report(error);
  }
}

function matchText(entry) {
  if (entry.cidr !== undefined) return entry.cidr;
  if (entry.tenant !== undefined) return `tenant ${entry.tenant}`;
  const named = entry.header ?? entry.claim;
  return `${entry.header ? 'header' : 'claim'} ${named.name} (sha256 ${named.valueSha256.slice(0, 12)}…)`;
}

function entryRow(entry, index) {
  const where = [entry.routes ? entry.routes.join(', ') : 'every route'];
  if (entry.limit !== undefined) where.push(`lifts ${entry.limit}`);
  if (entry.expiresAt !== undefined) where.push(`${entry.expired ? 'expired' : 'until'} ${entry.expiresAt}`);
  const remove = element('button', 'Delete', { type: 'button', 'data-remove': String(index), 'data-needs': 'write', 'aria-label': `Delete list entry ${entry.id}` });
  return row([entry.id, entry.action, matchText(entry), where.join('; '), entry.note ?? '', remove]);
}

async function onDelete(event, api, report) {
  const button = event.target.closest('button');
  const entry = button && entries[Number(button.dataset.remove)];
  if (!entry || !window.confirm(`Delete list entry ${entry.id} (${entry.action} ${matchText(entry)})?`)) return;
  try {
    await api.call('DELETE', `/lists/${encodeURIComponent(entry.id)}`);
    document.getElementById('list-status').textContent = `Deleted list entry ${entry.id}.`;
    await load(api, report);
  } catch (error) {
    document.getElementById('list-error').textContent = error.message;
    report(error);
  }
}

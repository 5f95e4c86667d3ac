// The audit log: who changed what, from where, before and after, newest first,
// filtered by kind and author, a page at a time (GET /audit with its cursor).
import { element, row } from './api.js';

const PAGE = 50;
let next;

export function setupAudit(api, report) {
  document.getElementById('audit-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void load(api, report, false);
  });
  document.getElementById('audit-more').addEventListener('click', () => void load(api, report, true));
  return {
    load: () => load(api, report, false),
    clear() {
      next = undefined;
      document.querySelector('#audit tbody').replaceChildren();
      document.getElementById('audit-more').hidden = true;
      document.getElementById('audit-form').reset();
    },
  };
}

async function load(api, report, more) {
  const query = new URLSearchParams({ limit: String(PAGE) });
  const kind = document.getElementById('audit-kind').value;
  const actor = document.getElementById('audit-actor').value.trim();
  if (kind) query.set('kind', kind);
  if (actor) query.set('actor', actor);
  if (more && next) query.set('cursor', next);
  try {
    const page = await api.call('GET', `/audit?${query}`);
    const tbody = document.querySelector('#audit tbody');
    const rows = page.entries.map(entryRow);
    if (more) tbody.append(...rows);
    else tbody.replaceChildren(...(rows.length === 0 ? [row(['no change recorded', '', '', '', '', '', ''])] : rows));
    next = page.next;
    document.getElementById('audit-more').hidden = !next;
  } catch (error) {
    report(error);
  }
}

function entryRow(entry) {
  const outcome = element('span', entry.outcome === 'ok' ? 'ok' : `failed: ${entry.error ?? ''}`, { class: entry.outcome === 'ok' ? 'ok' : 'failed' });
  const tr = row([entry.at.replace('T', ' ').slice(0, 19), entry.actor, entry.address, entry.action, entry.target, change(entry), outcome]);
  tr.dataset.outcome = entry.outcome;
  return tr;
}

/** Before → after, as short JSON; the full values are in the title. */
function change(entry) {
  const text = (value) => (value === null || value === undefined ? '—' : JSON.stringify(value.rule ?? value));
  const cell = element('span', `${text(entry.before)} → ${text(entry.after)}`, { class: 'change' });
  cell.title = `before: ${JSON.stringify(entry.before)}\nafter: ${JSON.stringify(entry.after)}`;
  return cell;
}

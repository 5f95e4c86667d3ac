// The overview, the page's front door: on one screen, what is degraded or
// behind, every instance's mode and breaker, the routes refusing most right
// now and the most limited tenants, each with a link to the view that has the
// details. Made from the overview the page polls anyway: no call of its own.
import { element, row } from './api.js';
import { behindBy, newestVersions, time } from './instances.js';

/** Rows per table: the overview must fit one screen whatever the cluster's size. */
const SHOWN = { instances: 6, routes: 5, tenants: 5, attention: 6 };
/** The views the trouble list links to, by the words of their navigation link. */
const VIEW_WORDS = { instances: 'Instances', routes: 'Routes and history' };

export function renderSummary(overview) {
  renderAttention(attentionOf(overview));
  const versions = newestVersions(overview.instances);
  const instanceRows = overview.instances.map((instance) => instanceRow(instance, versions, overview.scope));
  fill('sum-instances', capped(instanceRows, SHOWN.instances, 'instances', 5), ['no instance publishing', '', '', '', '']);
  const routes = routesByRefusals(overview);
  const routeRows = routes.map(({ route, refused5, refused60, allowed60 }) => {
    const tr = row([route, refused5, refused60, allowed60]);
    tr.dataset.sumRoute = route;
    return tr;
  });
  fill('sum-routes', capped(routeRows, SHOWN.routes, 'routes', 4), ['nothing refused in the last minute', '', '', '']);
  const tenantRows = overview.top.map((entry) => row([entry.tenant, entry.route, entry.count]));
  fill('sum-tenants', capped(tenantRows, SHOWN.tenants, 'tenants', 3), ['no refusals in the last minutes', '', '']);
}

export function clearSummary() {
  for (const id of ['sum-instances', 'sum-routes', 'sum-tenants']) document.querySelector(`#${id} tbody`).replaceChildren();
  document.getElementById('attention').replaceChildren();
}

/** Each trouble as { level, text, view }: the view whose section shows it in full. */
export function attentionOf(overview) {
  const items = [];
  if (overview.scope === 'local' && /unavailable/.test(overview.scopeNote ?? '')) items.push({ level: 'bad', text: `${overview.scopeNote.charAt(0).toUpperCase()}${overview.scopeNote.slice(1)}.`, view: 'instances' });
  const versions = newestVersions(overview.instances);
  for (const instance of overview.instances) {
    const { id } = instance;
    if (instance.gone === 'lost') items.push({ level: 'bad', text: `${id} went silent: no word since ${time(instance.at)}.`, view: 'instances' });
    if (instance.gone) continue;
    if (instance.mode === 'fallback' || instance.breaker === 'open') {
      items.push({ level: 'bad', text: `${id} is in ${instance.mode}, breaker ${instance.breaker}: Redis unreachable, it limits alone (1/${instance.instances} of each limit).`, view: 'instances' });
    }
    const behind = behindBy(instance, versions, overview.scope);
    if (behind > 0) items.push({ level: 'warn', text: `${id} has stale rules: version ${instance.rules.version}, behind by ${behind}.`, view: 'instances' });
    if (instance.history?.behind > 0) {
      items.push({ level: 'warn', text: `${id}'s history is behind: ${instance.history.behind} batch${instance.history.behind === 1 ? '' : 'es'} not yet written to Redis.`, view: 'routes' });
    }
  }
  return items;
}

function renderAttention(items) {
  const list = document.getElementById('attention');
  const card = document.getElementById('attention-card');
  card.dataset.level = items.some((item) => item.level === 'bad') ? 'bad' : items.length > 0 ? 'warn' : 'ok';
  if (items.length === 0) {
    list.replaceChildren(element('li', 'Nothing degraded or behind: every live instance decides with its breaker closed, on the newest rules.', { class: 'ok' }));
    return;
  }
  const shown = items.slice(0, SHOWN.attention).map((item) => {
    const li = element('li', undefined, { class: `attention-${item.level}`, 'data-level': item.level });
    li.append(element('span', item.text), ' ', element('a', `See ${VIEW_WORDS[item.view]}`, { href: `#/${item.view}`, 'data-overview-link': item.view }));
    return li;
  });
  if (items.length > SHOWN.attention) shown.push(element('li', `and ${items.length - SHOWN.attention} more: see Instances.`));
  list.replaceChildren(...shown);
}

function instanceRow(instance, versions, scope) {
  const behind = behindBy(instance, versions, scope);
  const version = instance.rules?.version;
  const rules = version === undefined ? '–' : behind > 0 ? `${version}, behind by ${behind}` : `${version}, up to date`;
  const tr = row([
    instance.self ? `${instance.id} (this page)` : instance.id,
    instance.gone ? `gone: ${instance.gone}` : 'live',
    element('span', instance.mode, { class: `state-${instance.mode}` }),
    element('span', instance.breaker, { class: `state-${instance.breaker}` }),
    rules,
  ]);
  tr.dataset.instance = instance.id;
  tr.dataset.mode = instance.mode;
  tr.dataset.breaker = instance.breaker;
  if (instance.gone === 'stopped') tr.className = 'gone-row';
  else if (instance.gone || instance.mode === 'fallback' || instance.breaker === 'open') tr.className = 'trouble-bad';
  else if (behind > 0) tr.className = 'trouble-warn';
  return tr;
}

/** Routes with refusals in the last minute, most first (the last 5 s break ties). */
export function routesByRefusals(overview) {
  const sum = (values) => values.reduce((a, b) => a + b, 0);
  return Object.entries(overview.routes)
    .map(([route, series]) => ({ route, refused5: sum(series.refused.slice(-5)), refused60: sum(series.refused), allowed60: sum(series.allowed) }))
    .filter((entry) => entry.refused60 > 0)
    .sort((a, b) => b.refused60 - a.refused60 || b.refused5 - a.refused5 || (a.route < b.route ? -1 : 1));
}

/** The first `limit` rows, and one saying how many more the view has. */
function capped(rows, limit, what, blanks) {
  if (rows.length <= limit) return rows;
  return [...rows.slice(0, limit), row([`and ${rows.length - limit} more ${what}`, ...Array(blanks - 1).fill('')])];
}

function fill(id, rows, empty) {
  document.querySelector(`#${id} tbody`).replaceChildren(...(rows.length > 0 ? rows : [row(empty)]));
}

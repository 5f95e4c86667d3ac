// The instances: one row each (address, version, uptime, mode, Redis round
// trip, rule-set version and how far behind the newest, last seen), gone ones kept
// a while and marked; each instance's upstream instances; and the banner when
// any instance is degraded.
import { element, row } from './api.js';

export function renderInstances(instances, scope) {
  const live = instances.filter((i) => !i.gone);
  const newest = { at: Math.max(0, ...live.map((i) => i.rules?.lastChangeAt ?? 0)), versions: newestVersions(instances) };
  const tbody = document.querySelector('#instances tbody');
  tbody.replaceChildren(...instances.map((instance) => instanceRow(instance, newest, scope)));
  renderUpstreams(live);
}

/** The newest rule-set version any live instance has applied, per rule store: versions count per store, compared only between instances on the same one. */
export function newestVersions(instances) {
  const versions = new Map();
  for (const i of instances) if (!i.gone && i.rules?.version !== undefined) versions.set(i.rules.storeId, Math.max(versions.get(i.rules.storeId) ?? 0, i.rules.version));
  return versions;
}

function instanceRow(instance, newest, scope) {
  const degraded = Object.values(instance.degraded).reduce((a, b) => a + b, 0);
  const state = instance.gone === 'stopped' ? `gone: stopped at ${time(instance.stoppedAt)}` : instance.gone === 'lost' ? 'gone: no word since last seen' : 'live';
  const tr = row([
    instance.self ? `${instance.id} (serving this page)` : instance.id,
    element('span', state, { class: instance.gone ? `state-gone-${instance.gone}` : 'state-live' }),
    instance.address ?? '–',
    instance.version,
    instance.startedAt ? duration(instance.at - instance.startedAt) : '–',
    element('span', instance.mode, { class: `state-${instance.mode}` }),
    element('span', instance.breaker, { class: `state-${instance.breaker}` }),
    instance.redisRttMs === undefined ? '–' : `${instance.redisRttMs} ms`,
    versionCell(instance, newest.versions, scope),
    rulesCell(instance, newest.at, scope),
    instance.instances,
    degraded,
    `${time(instance.at)}`,
  ]);
  tr.dataset.instance = instance.id;
  tr.dataset.mode = instance.mode;
  tr.dataset.state = instance.gone ? `gone-${instance.gone}` : 'live';
  // A clean stop is greyed, not alarming; silence or fallback is trouble.
  if (instance.gone === 'stopped') tr.className = 'gone-row';
  else if (instance.gone || instance.mode === 'fallback') tr.className = 'trouble-bad';
  else if (behindBy(instance, newest.versions, scope) > 0) tr.className = 'trouble-warn';
  return tr;
}

/** Versions behind the newest any live instance on the same rule store has applied. */
export function behindBy(instance, versions, scope) {
  const version = instance.rules?.version;
  return version === undefined || instance.gone || scope !== 'cluster' ? 0 : (versions.get(instance.rules.storeId) ?? version) - version;
}

function versionCell(instance, versions, scope) {
  const version = instance.rules?.version;
  if (version === undefined) return '–';
  const behind = behindBy(instance, versions, scope);
  const cell = element('span', behind > 0 ? `${version}, behind by ${behind}` : `${version}, up to date`, { class: behind > 0 ? 'state-behind' : 'state-live' });
  cell.dataset.version = String(version);
  cell.dataset.behind = String(behind);
  return cell;
}

/** Rule changes applied and how far behind the instance that applied the newest one (only meaningful with one shared rule store). */
function rulesCell(instance, newestRules, scope) {
  const rules = instance.rules;
  if (!rules) return '–';
  const changes = `${rules.changes} change${rules.changes === 1 ? '' : 's'}`;
  if (!rules.lastChangeAt) return changes;
  const behind = newestRules - rules.lastChangeAt;
  const lag = scope === 'cluster' && behind > 2000 ? `, ${duration(behind)} behind the newest` : '';
  return `${changes}, last ${time(rules.lastChangeAt)}${lag}`;
}

function renderUpstreams(instances) {
  const rows = [];
  for (const instance of instances) {
    for (const upstream of instance.upstreams ?? []) {
      const tr = row([instance.id, upstream.route, upstream.url, upstream.requests, upstream.errors, upstream.ejections, upstream.meanMs === undefined ? '–' : `${upstream.meanMs} ms`]);
      tr.dataset.upstream = `${upstream.route} ${upstream.url}`;
      if (upstream.errors > 0 || upstream.ejections > 0) tr.className = 'trouble-warn';
      rows.push(tr);
    }
  }
  const tbody = document.querySelector('#upstreams tbody');
  tbody.replaceChildren(...(rows.length > 0 ? rows : [row(['', 'no upstream request yet', '', '', '', '', ''])]));
}

/** Degraded: an instance in fallback or with an open breaker, or one gone without stopping. */
export function renderBanner(instances) {
  const banner = document.getElementById('degraded-banner');
  const troubles = [];
  for (const instance of instances) {
    if (instance.gone === 'lost') troubles.push(`${instance.id} went silent (last seen ${time(instance.at)})`);
    else if (!instance.gone && (instance.mode === 'fallback' || instance.breaker === 'open')) troubles.push(`${instance.id} is in ${instance.mode}, breaker ${instance.breaker}: Redis unreachable, each instance limits alone`);
  }
  banner.hidden = troubles.length === 0;
  banner.textContent = troubles.length === 0 ? '' : `Degraded: ${troubles.join('; ')}.`;
}

export function clearInstances() {
  for (const id of ['instances', 'upstreams']) document.querySelector(`#${id} tbody`).replaceChildren();
  const banner = document.getElementById('degraded-banner');
  banner.hidden = true;
  banner.textContent = '';
}

export function time(ms) {
  return new Date(ms).toLocaleTimeString();
}

function duration(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

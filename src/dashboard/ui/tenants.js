// Tenant lookup: search a tenant by id, or paste an API key to find its tenant;
// the tenant found is shown with its limits, what is left of each and what it
// consumed over the last hour and day (docs/tenant-usage.md).
// A pasted key is hashed here, in the browser (SubtleCrypto SHA-256, the hash
// the key tables keep), the field emptied at once, and only the hash is sent.
import { element, row } from './api.js';

export function setupTenants(api, report) {
  document.getElementById('tenant-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    await show(api, report, document.getElementById('tenant-id').value.trim(), '');
  });
  document.getElementById('key-lookup-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const input = document.getElementById('key-lookup');
    const key = input.value.trim();
    input.value = '';
    const result = document.getElementById('tenant-result');
    if (key === '') return void result.replaceChildren(element('p', 'Paste an API key first.', { class: 'field-error' }));
    if (!globalThis.crypto?.subtle) return void result.replaceChildren(element('p', 'This browser offers no SubtleCrypto here (it needs HTTPS, or 127.0.0.1): the key was not sent.', { class: 'field-error' }));
    const hash = await sha256Hex(key);
    try {
      const { tenant } = await api.call('GET', `/tenants/by-key-hash/${hash}`);
      await show(api, report, tenant, `The key (SHA-256 ${hash.slice(0, 12)}…, hashed in this browser) belongs to tenant ${tenant}.`);
    } catch (error) {
      if (error.status === 404) result.replaceChildren(element('p', `No active key of the rule store has this hash (${hash.slice(0, 12)}…): unknown, revoked, or a key of the config file.`, { class: 'field-error' }));
      else report(error);
    }
  });
  return {
    clear() {
      document.getElementById('tenant-result').replaceChildren();
      document.getElementById('tenant-form').reset();
      document.getElementById('key-lookup-form').reset();
    },
  };
}

async function sha256Hex(text) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** The tenant's limits with what is left and what it consumed (GET /tenants/{id}/usage), then its rules, keys and overrides as the rule store holds them. */
async function show(api, report, tenant, intro) {
  const result = document.getElementById('tenant-result');
  try {
    const q = encodeURIComponent(tenant);
    const [usage, { rules }, { keys }, { overrides }] = await Promise.all([usageOf(api, q), api.call('GET', `/rules?tenant=${q}`), api.call('GET', `/keys?tenant=${q}`), api.call('GET', '/overrides')]);
    const own = overrides.filter((o) => o.selector === `tenant:${tenant}`);
    result.replaceChildren(
      ...(intro ? [element('p', intro, { class: 'found' })] : []),
      element('h3', `Tenant ${tenant}`),
      ...usageNodes(usage),
      table(['Route', 'Policy', 'Rule'], rules.map((r) => [r.route, r.rule.policy, JSON.stringify(r.rule)]), 'no rule of its own: the default rule (or a * rule) applies'),
      table(['Key id', 'Created', 'State'], keys.map((k) => [k.id, k.createdAt, k.revokedAt ? `revoked ${k.revokedAt}` : 'active']), 'no key in the rule store'),
      table(['Limit', 'Override'], own.map((o) => [o.limitId, JSON.stringify(o.rule)]), 'no per-key override'),
    );
  } catch (error) {
    if (error.status === 400) result.replaceChildren(element('p', `${error.field ?? 'tenant'}: ${error.message}`, { class: 'field-error' }));
    else report(error);
  }
}

/** The usage answer, or undefined where this admin API has no gateway beside it (404). */
async function usageOf(api, q) {
  try {
    return await api.call('GET', `/tenants/${q}/usage`);
  } catch (error) {
    if (error.status === 404) return undefined;
    throw error;
  }
}

/** One row per limit counting the tenant: what is left, when it is full again, the last hour's and day's consumption. */
function usageNodes(usage) {
  if (usage === undefined) return [element('p', 'Usage: not available on this instance (no gateway beside this admin API).', { class: 'hint' })];
  const cell = (c) => (c ? `${c.units} units, ${c.requests} requests, ${c.refused} refused` : 'unknown');
  const left = (state) => {
    if (state === undefined) return 'a bucket per client address';
    if (state.error) return `unknown: ${state.error}`;
    return `${state.remaining} of ${state.limit}`;
  };
  const rows = usage.limits.map((limit) => [limit.id, `${limit.global ? 'global: ' : ''}${limit.routes.join(', ')}`, left(limit.state), limit.state?.resetAt ?? '', cell(limit.lastHour), cell(limit.lastDay)]);
  const scope = usage.scope === 'cluster' ? "the cluster's counts" : "this instance's counts (memory store)";
  return [
    element('h4', `Limits and usage (${scope})`),
    table(['Limit', 'Routes', 'Left', 'Full again at', 'Last hour', 'Last day'], rows, 'no limit counts this tenant'),
    ...(usage.historyError ? [element('p', `Consumption unknown: ${usage.historyError}`, { class: 'field-error' })] : []),
  ];
}

function table(headings, rows, empty) {
  const node = element('table');
  const head = element('tr');
  for (const heading of headings) head.append(element('th', heading, { scope: 'col' }));
  node.append(element('thead'), element('tbody'));
  node.tHead.append(head);
  node.tBodies[0].append(...(rows.length === 0 ? [row([empty, ...headings.slice(1).map(() => '')])] : rows.map(row)));
  return node;
}

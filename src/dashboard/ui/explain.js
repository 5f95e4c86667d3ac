// Explain a request: a sample (method, path, host, headers, client address)
// sent to GET /explain, and its answer shown: what the gateway would answer,
// the route that takes it and why each other does not, the tenant, and each
// limit (applied, shadow or skipped and why) with its key, rule, bucket and
// state now. The form is built here, into the page's #explain-section, so the
// page's layout needs only that one section. The headers field (it may hold an
// API key) is a password-like textarea emptied once the answer is shown; the
// answer never holds a header's value, only hashes.
import { element, row } from './api.js';

const FIELDS = [
  ['method', 'Method', 'GET'],
  ['path', 'Path (and query)', '/orders/42'],
  ['host', 'Host (optional)', 'api.example.com'],
  ['ip', 'Client address (the connecting peer)', '203.0.113.7'],
];

export function setupExplain(api, report) {
  const section = document.getElementById('explain-section');
  if (!section) return { clear() {} };
  const form = element('form', undefined, { id: 'explain-form', novalidate: '' });
  for (const [name, label, placeholder] of FIELDS) {
    form.append(element('label', label, { for: `explain-${name}` }), element('input', undefined, { id: `explain-${name}`, name, placeholder, autocomplete: 'off' }));
  }
  form.append(
    element('label', 'Request headers, one per line (X-Api-Key: …)', { for: 'explain-headers' }),
    element('textarea', undefined, { id: 'explain-headers', rows: '3', spellcheck: 'false', autocomplete: 'off', placeholder: 'X-Api-Key: …\nX-Forwarded-For: 198.51.100.9' }),
    element('button', 'Explain', { type: 'submit' }),
    element('p', 'Header values go to the admin API in the query string and are never shown back: an API key appears as the first digits of its SHA-256.', { class: 'hint' }),
  );
  const result = element('div', undefined, { id: 'explain-result', role: 'status' });
  const layout = element('div', undefined, { class: 'lookups' });
  layout.append(form);
  section.append(layout, result);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const query = new URLSearchParams();
    for (const [name] of FIELDS) {
      const value = form.elements[name].value.trim();
      if (value !== '') query.set(name, value);
    }
    const headers = document.getElementById('explain-headers');
    for (const line of headers.value.split('\n')) if (line.trim() !== '') query.append('header', line.trim());
    try {
      const answer = await api.call('GET', `/explain?${query}`);
      headers.value = '';
      result.replaceChildren(...render(answer));
    } catch (error) {
      if (error.status === 400) result.replaceChildren(element('p', `${error.field ?? 'request'}: ${error.message}`, { class: 'field-error' }));
      else report(error);
    }
  });
  return {
    clear() {
      form.reset();
      result.replaceChildren();
    },
  };
}

function render(answer) {
  const { outcome, identity } = answer;
  const who = identity.anonymous ? 'anonymous route: no API key read' : identity.problem ?? (identity.tenant ? `tenant ${identity.tenant}` : 'no tenant');
  return [
    element('p', `${outcome.status === 0 ? 'no answer' : outcome.status}${outcome.error ? ` ${outcome.error}` : ''}: ${outcome.summary}`, { class: outcome.status >= 400 || outcome.status === 0 ? 'field-error' : 'found', id: 'explain-outcome' }),
    element('p', `${answer.request.method} ${answer.request.path}, client ${answer.request.clientIp ?? 'none'}; ${who}${identity.keySha256 ? ` (key sha256 ${identity.keySha256}…)` : ''}`),
    table('Routes, in order: the first that matches takes the request', ['Route', 'Matches', 'Why'], answer.routes.map((r) => [r.id, r.matched ? 'yes' : r.reason, r.why])),
    table('Limits', ['Limit', 'Status', 'Why', 'Rule (from)', 'Bucket', 'Now'], answer.limits.map(limitCells), 'explain-limits'),
  ];
}

function limitCells(limit) {
  const state = limit.state === undefined ? '' : 'error' in limit.state ? `unknown: ${limit.state.error}` : `${limit.state.remaining}/${limit.state.limit}, reset in ${limit.state.resetAfterMs} ms`;
  const rule = limit.rule ? `${limit.rule.policy} (${limit.source?.from ?? 'config'}${limit.source?.match ? `: ${limit.source.match}` : ''})` : limit.max !== undefined ? `at most ${limit.max} open` : '';
  const bucket = limit.bucket ? `${limit.bucket.redisKey}${limit.bucket.field ? ` ${limit.bucket.field}` : ''}` : '';
  return [limit.id, limit.status + (limit.reason ? ` (${limit.reason})` : ''), limit.why, rule, bucket, state];
}

function table(caption, headings, rows, id) {
  const node = element('table', undefined, id ? { id } : {});
  node.append(element('caption', caption), element('thead'), element('tbody'));
  const head = element('tr');
  for (const heading of headings) head.append(element('th', heading, { scope: 'col' }));
  node.tHead.append(head);
  node.tBodies[0].append(...(rows.length === 0 ? [row(['none', ...headings.slice(1).map(() => '')])] : rows.map(row)));
  return node;
}

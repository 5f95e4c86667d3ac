// An explanation as text for a person at a terminal (`sluice explain`'s
// default; `--format json` prints the structure itself).
import type { Rule } from '../policies/rule.js';
import type { AuthExplanation, Explanation, LimitExplanation } from './explain.js';

export function renderText(explanation: Explanation): string {
  const { request, outcome, identity } = explanation;
  const lines: string[] = [];
  const client = request.clientIp === undefined ? 'no client address' : `client ${request.clientIp}${request.trustedProxy ? ` (from the forwarding header of trusted proxy ${request.peer})` : ''}`;
  lines.push(`${request.method} ${request.path}${request.host ? ` host ${request.host}` : ''}, ${client}`);
  lines.push(`=> ${outcome.status === 0 ? 'no answer' : outcome.status}${outcome.error ? ` ${outcome.error}` : ''}: ${outcome.summary}`);
  if (explanation.routes.length > 0) {
    lines.push('', 'routes (the first that matches takes the request):');
    for (const route of explanation.routes) lines.push(`  ${route.matched ? '+' : '-'} ${route.id}${route.reason ? ` [${route.reason}]` : ''}: ${route.why}`);
  }
  lines.push('', 'identity:');
  if (explanation.auth) lines.push(...authLines(explanation.auth));
  // A refused token is answered before the API key is read; with tenantClaim the key is never read.
  if (explanation.auth !== undefined && (explanation.auth.outcome !== 'verified' || explanation.auth.tenantFrom === 'token')) {
    if (explanation.auth.tenant) lines.push(`  tenant ${explanation.auth.tenant} (from claim ${explanation.auth.tenantClaim})`);
  } else if (identity.anonymous) lines.push(`  anonymous route: the ${identity.keyHeader} header is not read, there is no tenant`);
  else {
    const key = identity.keySha256 ? `API key (${identity.keyHeader}, sha256 ${identity.keySha256}...)` : `no API key in ${identity.keyHeader}`;
    const who = identity.problem ?? (identity.tenant ? `tenant ${identity.tenant}${identity.plan ? ` (the key's plan: ${identity.plan})` : ''}${identity.unknownKey ? ' (an unknown key, a tenant of its own under unknownKeys: default-rule)' : ''}` : 'no tenant');
    lines.push(`  ${key}: ${who}`);
  }
  if (explanation.limits.length > 0) {
    lines.push('', 'limits:');
    for (const limit of explanation.limits) lines.push(...limitLines(limit));
  }
  return `${lines.join('\n')}\n`;
}

/** The token's outcome: claim and header names only, never the token or a claim's value. */
function authLines(auth: AuthExplanation): string[] {
  const where = auth.source.kind === 'bearer' ? 'Authorization: Bearer' : `${auth.source.kind} ${auth.source.name}`;
  const verdict = auth.outcome === 'refused' ? `refused (${auth.reason}: ${auth.check})` : auth.outcome;
  const out = [`  JWT required (${where}): ${verdict}`];
  if (auth.outcome !== 'verified') return out;
  if (auth.planClaim) out.push(`  plan ${auth.plan ?? '(none in the token)'} (from claim ${auth.planClaim})`);
  for (const { claim, header, present } of auth.forwarded) out.push(`  claim ${claim} -> header ${header} upstream${present ? '' : ' (not in this token: not set)'}`);
  return out;
}

function limitLines(limit: LimitExplanation): string[] {
  const head = `${limit.kind === 'concurrency' ? 'concurrency ' : ''}${limit.global ? 'global ' : ''}limit ${limit.id}`;
  const out = [`  ${head}: ${limit.status}${limit.reason ? ` (${limit.reason})` : ''}, ${limit.why}`];
  if (limit.rule) {
    const source = limit.source ? `   from ${sourceText(limit.source)}` : '';
    out.push(`      rule   ${ruleText(limit.rule)}${source}`);
  }
  if (limit.max !== undefined) out.push(`      max    ${limit.max} open at once`);
  if (limit.bucket) {
    const { redisKey, field, shards } = limit.bucket;
    out.push(`      bucket ${redisKey}${field ? ` field ${field}` : ''}${shards ? ` (sharded: ${shards.map((shard) => shard.redisKey).join(', ')})` : ''}`);
  }
  if (limit.state) {
    const state = limit.state;
    if ('error' in state) out.push(`      now    unknown: ${state.error}`);
    else out.push(`      now    ${state.remaining}/${state.limit} remaining, reset in ${state.resetAfterMs} ms${state.retryAfterMs > 0 ? `, refusing for ${state.retryAfterMs} ms` : ''} (${state.location})`);
  }
  return out;
}

function sourceText({ from, match, selector, plan }: NonNullable<LimitExplanation['source']>): string {
  if (from === 'override') return `override${selector ? ` ${selector}` : ''}`;
  if (from === 'plan') return `plan ${plan ?? ''}`.trimEnd();
  if (from === 'config') return match ? `config rules (${match})` : "config (the limit's own rule)";
  return match ? `${from} (${match})` : from;
}

function ruleText(rule: Rule): string {
  const { policy, ...rest } = rule;
  return `${policy} ${Object.entries(rest)
    .map(([name, value]) => `${name}=${typeof value === 'object' ? JSON.stringify(value) : String(value)}`)
    .join(' ')}`;
}

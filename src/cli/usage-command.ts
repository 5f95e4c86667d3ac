// `sluice usage TENANT [--json] [--admin URL]`: what one tenant may still
// spend and what it spent, through the admin API's GET /tenants/{id}/usage:
// for each limit that counts its requests, what is left of it and when it
// resets, and its consumption over the last hour and day.
import type { LimitUsage, TenantUsage } from '../admin/usage-handler.js';
import type { UsageCell } from '../usage/usage-history.js';
import { clientFrom } from './admin-client.js';
import { ADMIN_OPTIONS, JSON_OPTION, type CliIo, parseCommandArgs, processIo, runCli, UsageError } from './cli-io.js';

const USAGE = `usage: sluice usage TENANT [--json] [--admin URL]   (token from SLUICE_ADMIN_TOKEN, role read)
  for each limit counting TENANT's requests: what is left, when it resets, and what it consumed
  over the last hour and day (the cluster's counts on Redis, this instance's on the memory store)
`;

export function run(argv: string[], io: CliIo = processIo): Promise<number> {
  return runCli(io, USAGE, async () => {
    const { positional, options } = parseCommandArgs(argv, { ...ADMIN_OPTIONS, ...JSON_OPTION });
    const [tenant, ...extra] = positional;
    if (tenant === undefined || extra.length > 0) throw new UsageError(tenant === undefined ? 'name the tenant' : `one tenant at a time (got ${positional.join(' ')})`);
    const usage = await clientFrom(options, io).call<TenantUsage>('GET', `/tenants/${encodeURIComponent(tenant)}/usage`);
    io.out(options.has('json') ? `${JSON.stringify(usage, null, 2)}\n` : renderUsage(usage));
    return 0;
  });
}

/** One block per limit, aligned for a terminal. */
export function renderUsage(usage: TenantUsage): string {
  const lines = [`tenant ${usage.tenant} at ${usage.at} (${usage.scope === 'cluster' ? "the cluster's counts" : "this instance's counts: memory store"})`];
  if (usage.limits.length === 0) lines.push('  no limit counts this tenant');
  for (const limit of usage.limits) lines.push('', ...limitLines(limit));
  if (usage.historyError) lines.push('', `consumption unknown: ${usage.historyError}`);
  return `${lines.join('\n')}\n`;
}

function limitLines(limit: LimitUsage): string[] {
  const routes = limit.global ? `global, routes ${limit.routes.join(', ')}` : `route ${limit.routes.join(', ')}`;
  const from = limit.source ? ` from ${limit.source.from}${limit.source.plan ? ` ${limit.source.plan}` : ''}` : '';
  const out = [`${limit.id} (${routes}; per ${limit.keyedBy}${from})`];
  if (limit.rule) out.push(`  rule       ${JSON.stringify(limit.rule)}`);
  const state = limit.state;
  if (state === undefined) out.push('  left       one bucket per client address: see sluice explain');
  else if ('error' in state) out.push(`  left       unknown: ${state.error}`);
  else out.push(`  left       ${state.remaining} of ${state.limit}, full again at ${state.resetAt}`);
  if (limit.lastHour) out.push(`  last hour  ${cellText(limit.lastHour)}`);
  if (limit.lastDay) out.push(`  last day   ${cellText(limit.lastDay)}`);
  return out;
}

const cellText = (cell: UsageCell) => `${cell.units} units in ${cell.requests} requests, ${cell.refused} refused`;

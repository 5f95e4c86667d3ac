// `sluice plans list|show|create|set-limit|unset-limit|delete|assign|unassign`:
// plans (docs/plans.md) through the admin API, as `sluice rules` does rules.
// A rule is given as JSON or with the rule's options (ruleFromOptions); the
// scope of a limit is one of --global, --route ID or --limit-id ID.
import { type AdminClient, clientFrom } from './admin-client.js';
import { ADMIN_OPTIONS, JSON_OPTION, type CliIo, parseCommandArgs, processIo, runCli, UsageError } from './cli-io.js';
import type { PlanAssignment, PlanLimit, StoredPlan } from '../rules/plans.js';
import { parseJson, ruleFromOptions, ruleOptions } from './rules-command.js';

const USAGE = `usage: sluice plans <command> [--admin URL]   (token from SLUICE_ADMIN_TOKEN)
  list [--json]                                  plans and their limits
  show NAME                                      one plan as JSON, with who is on it
  create NAME                                    a new plan, no limits yet
  set-limit NAME SCOPE '{"policy":...}'          create or replace one of its limits (JSON), or with options:
  set-limit NAME SCOPE --policy token_bucket --capacity 200 --refill-per-second 100
  unset-limit NAME SCOPE                         delete one of its limits
  delete NAME                                    delete a plan no tenant or key is on
  assign NAME --tenant T | --key KEY_ID          put a tenant or an API key on the plan
  unassign --tenant T | --key KEY_ID             take it off its plan
SCOPE is --global (every route), --route ROUTE or --limit-id LIMIT_ID (a route's limits: entry).
`;

const SCOPE_FLAGS = ['global', 'route', 'limit-id'];

export function run(argv: string[], io: CliIo = processIo): Promise<number> {
  return runCli(io, USAGE, async () => {
    const [command, ...rest] = argv;
    const { positional, options } = parseCommandArgs(rest, {
      ...ADMIN_OPTIONS,
      ...JSON_OPTION,
      ...ruleOptions(),
      global: { type: 'boolean' },
      route: { type: 'string' },
      'limit-id': { type: 'string' },
      tenant: { type: 'string' },
      key: { type: 'string' },
    });
    const client = clientFrom(options, io);
    switch (command) {
      case 'list':
        return list(client, options.has('json'), io);
      case 'show': {
        const name = need(positional, 'show NAME');
        const [plan, { assignments }] = await Promise.all([
          client.call<StoredPlan>('GET', planPath(name)),
          client.call<{ assignments: PlanAssignment[] }>('GET', `${planPath(name)}/assignments`),
        ]);
        io.out(`${JSON.stringify({ ...plan, assignments }, null, 2)}\n`);
        return 0;
      }
      case 'create': {
        const created = await client.call<StoredPlan>('POST', '/plans', { name: need(positional, 'create NAME') });
        io.out(`created plan ${created.name}\n`);
        return 0;
      }
      case 'set-limit':
        return setLimit(client, positional, options, io);
      case 'unset-limit': {
        const name = need(positional, 'unset-limit NAME SCOPE');
        await client.call('DELETE', limitPath(name, options));
        io.out(`deleted a limit of plan ${name}\n`);
        return 0;
      }
      case 'delete': {
        const name = need(positional, 'delete NAME');
        await client.call('DELETE', planPath(name));
        io.out(`deleted plan ${name}\n`);
        return 0;
      }
      case 'assign': {
        const plan = need(positional, 'assign NAME --tenant T | --key KEY_ID');
        const done = await client.call<PlanAssignment>('PUT', subjectPath(options), { plan });
        io.out(`${done.subject} ${done.id} is on plan ${done.plan}\n`);
        return 0;
      }
      case 'unassign': {
        await client.call('DELETE', subjectPath(options));
        io.out('taken off its plan\n');
        return 0;
      }
      default:
        throw new UsageError(command ? `unknown command: plans ${command}` : 'missing command');
    }
  });
}

async function list(client: AdminClient, json: boolean, io: CliIo): Promise<number> {
  const { plans } = await client.call<{ plans: StoredPlan[] }>('GET', '/plans');
  if (json) io.out(`${JSON.stringify(plans, null, 2)}\n`);
  else for (const plan of plans) io.out(`${plan.name}\t${plan.limits.map(describeLimit).join('\t') || '(no limits)'}\n`);
  return 0;
}

const describeLimit = (limit: PlanLimit): string => `${limit.scope === 'global' ? 'global' : `${limit.scope} ${limit.target}`}: ${JSON.stringify(limit.rule)}`;

async function setLimit(client: AdminClient, positional: string[], options: Map<string, string | true>, io: CliIo): Promise<number> {
  const name = need(positional, 'set-limit NAME SCOPE ...');
  const path = limitPath(name, options);
  // ruleFromOptions reads only the rule's own options: the scope flags are not among them.
  const rule = positional[1] !== undefined ? parseJson(positional[1]) : ruleFromOptions(options);
  const stored = await client.call<PlanLimit>('PUT', path, rule);
  io.out(`set plan ${stored.plan} ${describeLimit(stored)}\n`);
  return 0;
}

/** The limit's path from exactly one scope flag. */
function limitPath(name: string, options: Map<string, string | true>): string {
  const given = SCOPE_FLAGS.filter((flag) => options.has(flag));
  if (given.length !== 1) throw new UsageError('give one scope: --global, --route ROUTE or --limit-id LIMIT_ID');
  const flag = given[0]!;
  if (flag === 'global') return `${planPath(name)}/limits/global`;
  const id = options.get(flag);
  if (typeof id !== 'string') throw new UsageError(`--${flag} needs an id`);
  return `${planPath(name)}/limits/${flag === 'route' ? 'route' : 'limit'}/${encodeURIComponent(id)}`;
}

function subjectPath(options: Map<string, string | true>): string {
  const tenant = options.get('tenant');
  const key = options.get('key');
  if ((tenant === undefined) === (key === undefined)) throw new UsageError('give one of --tenant TENANT or --key KEY_ID');
  const id = tenant ?? key;
  if (typeof id !== 'string') throw new UsageError(`--${tenant === undefined ? 'key' : 'tenant'} needs an id`);
  return `/assignments/${tenant === undefined ? 'key' : 'tenant'}/${encodeURIComponent(id)}`;
}

function need(positional: string[], form: string): string {
  if (positional[0] === undefined) throw new UsageError(`missing arguments: sluice plans ${form}`);
  return positional[0];
}

const planPath = (name: string): string => `/plans/${encodeURIComponent(name)}`;

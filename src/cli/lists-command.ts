// `sluice lists list|add|remove`: the rule store's allow and deny lists
// (docs/lists.md) through the admin API, as `sluice plans` does plans. The
// admin API checks an entry (400 naming the field); a header's or a claim's
// value is sent once and kept, shown and audited only as its SHA-256.
import { type AdminClient, clientFrom } from './admin-client.js';
import { ADMIN_OPTIONS, JSON_OPTION, type CliIo, parseCommandArgs, processIo, runCli, UsageError } from './cli-io.js';

const USAGE = `usage: sluice lists <command> [--admin URL]   (token from SLUICE_ADMIN_TOKEN)
  list [--json]                                  the stored entries (expired ones marked)
  add allow|deny MATCH [--routes R1,R2] [--limit-id LIMIT_ID] [--expires ISO_TIME] [--note TEXT]
  remove ID                                      delete an entry (every instance within a second)
MATCH is one of --cidr ADDRESS_OR_NETWORK, --tenant TENANT, --header NAME=VALUE, --claim NAME=VALUE.
--limit-id (allow only) lifts that rate limit and applies the route's others.
`;

type Options = Map<string, string | true>;

const LIST_OPTIONS = {
  ...ADMIN_OPTIONS,
  ...JSON_OPTION,
  ...Object.fromEntries(['cidr', 'tenant', 'header', 'claim', 'routes', 'limit-id', 'expires', 'note'].map((name) => [name, { type: 'string' as const }])),
};

/** An entry as the admin API answers it. */
interface ListEntryView {
  id: string;
  action: string;
  cidr?: string;
  tenant?: string;
  header?: { name: string; valueSha256: string };
  claim?: { name: string; valueSha256: string };
  routes?: string[];
  limit?: string;
  expiresAt?: string;
  note?: string;
  expired?: boolean;
}

export function run(argv: string[], io: CliIo = processIo): Promise<number> {
  return runCli(io, USAGE, async () => {
    const [command, ...rest] = argv;
    const { positional, options } = parseCommandArgs(rest, LIST_OPTIONS);
    const client = clientFrom(options, io);
    switch (command) {
      case 'list':
        return list(client, options.has('json'), io);
      case 'add': {
        const added = await client.call<ListEntryView>('POST', '/lists', entryOf(positional[0], options));
        io.out(`added ${added.action} entry ${added.id} (${describeMatch(added)})\n`);
        return 0;
      }
      case 'remove': {
        const id = positional[0];
        if (id === undefined) throw new UsageError('missing arguments: sluice lists remove ID');
        await client.call('DELETE', `/lists/${encodeURIComponent(id)}`);
        io.out(`removed list entry ${id}\n`);
        return 0;
      }
      default:
        throw new UsageError(command ? `unknown command: lists ${command}` : 'missing command');
    }
  });
}

async function list(client: AdminClient, json: boolean, io: CliIo): Promise<number> {
  const { entries } = await client.call<{ entries: ListEntryView[] }>('GET', '/lists');
  if (json) io.out(`${JSON.stringify(entries, null, 2)}\n`);
  else for (const entry of entries) io.out(`${[entry.id, entry.action, describeMatch(entry), describeScope(entry), entry.note ?? ''].join('\t').trimEnd()}\n`);
  return 0;
}

function describeMatch(entry: ListEntryView): string {
  if (entry.cidr !== undefined) return `cidr ${entry.cidr}`;
  if (entry.tenant !== undefined) return `tenant ${entry.tenant}`;
  const named = entry.header ?? entry.claim;
  return `${entry.header ? 'header' : 'claim'} ${named?.name} sha256:${named?.valueSha256}`;
}

function describeScope(entry: ListEntryView): string {
  const parts = [entry.routes ? `routes ${entry.routes.join(',')}` : 'every route'];
  if (entry.limit !== undefined) parts.push(`lifts ${entry.limit}`);
  if (entry.expiresAt !== undefined) parts.push(`${entry.expired ? 'expired' : 'until'} ${entry.expiresAt}`);
  return parts.join(', ');
}

/** The admin API's body from the command line; the API checks the values. */
function entryOf(action: string | undefined, options: Options): Record<string, unknown> {
  if (action !== 'allow' && action !== 'deny') throw new UsageError('give the action: sluice lists add allow|deny MATCH');
  const matches = ['cidr', 'tenant', 'header', 'claim'].filter((flag) => options.has(flag));
  if (matches.length !== 1) throw new UsageError('give one of --cidr, --tenant, --header NAME=VALUE or --claim NAME=VALUE');
  const flag = matches[0]!;
  const value = text(options, flag)!;
  const body: Record<string, unknown> = { action, [flag]: flag === 'header' || flag === 'claim' ? nameValue(flag, value) : value };
  const routes = text(options, 'routes');
  if (routes !== undefined) body.routes = routes.split(',').filter((route) => route !== '');
  for (const [option, field] of [['limit-id', 'limit'], ['expires', 'expiresAt'], ['note', 'note']] as const) {
    const given = text(options, option);
    if (given !== undefined) body[field] = given;
  }
  return body;
}

/** A string option's value (the parser refuses one given without a value). */
function text(options: Options, flag: string): string | undefined {
  const value = options.get(flag);
  return typeof value === 'string' ? value : undefined;
}

function nameValue(flag: string, given: string): { name: string; value: string } {
  const eq = given.indexOf('=');
  if (eq <= 0) throw new UsageError(`--${flag} takes NAME=VALUE`);
  return { name: given.slice(0, eq), value: given.slice(eq + 1) };
}

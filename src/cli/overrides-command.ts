// `sluice overrides list|set|delete`: per-key overrides of a limit's rule through
// the admin API. The selector is put in canonical form here, so a header value
// is hashed on this machine and only its hash is sent.
import { SluiceError } from '../core/errors.js';
import { parseSelector } from '../rules/override-selector.js';
import type { StoredOverride } from '../rules/types.js';
import { type AdminClient, clientFrom } from './admin-client.js';
import { ADMIN_OPTIONS, JSON_OPTION, type CliIo, parseCommandArgs, processIo, runCli, UsageError } from './cli-io.js';
import { parseJson, ruleFromOptions, ruleOptions } from './rules-command.js';

const USAGE = `usage: sluice overrides <command> [--admin URL]   (token from SLUICE_ADMIN_TOKEN)
  list [LIMIT] [--json]                     list overrides (of one limit)
  set LIMIT SELECTOR '{"policy":...}'       create or replace an override (JSON), or with options:
  set LIMIT SELECTOR --policy token_bucket --capacity 200 --refill-per-second 100
  delete LIMIT SELECTOR                     delete an override
SELECTOR: tenant:ID, ip:ADDRESS, ip:ADDRESS/LEN (IPv4 or IPv6) or header:VALUE (sent as its hash).
Precedence: docs/limits.md#overrides.
`;

export function run(argv: string[], io: CliIo = processIo): Promise<number> {
  return runCli(io, USAGE, async () => {
    const [command, ...rest] = argv;
    const { positional, options } = parseCommandArgs(rest, { ...ADMIN_OPTIONS, ...JSON_OPTION, ...ruleOptions() });
    const client = clientFrom(options, io);
    switch (command) {
      case 'list':
        return list(client, positional[0], options.has('json'), io);
      case 'set': {
        const [limitId, selector] = target(positional, 'set LIMIT SELECTOR ...');
        const rule = positional[2] !== undefined ? parseJson(positional[2]) : ruleFromOptions(options);
        const stored = await client.call<StoredOverride>('PUT', overridePath(limitId, selector), rule);
        io.out(`set ${stored.limitId} ${stored.selector}: ${JSON.stringify(stored.rule)}\n`);
        return 0;
      }
      case 'delete': {
        const [limitId, selector] = target(positional, 'delete LIMIT SELECTOR');
        await client.call('DELETE', overridePath(limitId, selector));
        io.out(`deleted ${limitId} ${selector}\n`);
        return 0;
      }
      default:
        throw new UsageError(command ? `unknown command: overrides ${command}` : 'missing command');
    }
  });
}

async function list(client: AdminClient, limitId: string | undefined, json: boolean, io: CliIo): Promise<number> {
  const path = limitId === undefined ? '/overrides' : `/limits/${encodeURIComponent(limitId)}/overrides`;
  const { overrides } = await client.call<{ overrides: StoredOverride[] }>('GET', path);
  if (json) io.out(`${JSON.stringify(overrides, null, 2)}\n`);
  else for (const o of overrides) io.out(`${o.limitId}\t${o.selector}\t${JSON.stringify(o.rule)}\n`);
  return 0;
}

/** The limit id and the canonical selector; a bad selector stops here, before any call. */
function target(positional: string[], form: string): [string, string] {
  const [limitId, selector] = positional;
  if (limitId === undefined || selector === undefined) throw new UsageError(`missing arguments: sluice overrides ${form}`);
  try {
    return [limitId, parseSelector(selector).text];
  } catch (error) {
    throw error instanceof SluiceError ? new UsageError(`SELECTOR ${error.message}`) : error;
  }
}

const overridePath = (limitId: string, selector: string): string => `/limits/${encodeURIComponent(limitId)}/overrides/${encodeURIComponent(selector)}`;

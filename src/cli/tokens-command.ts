// `sluice tokens create|list|revoke`: named admin tokens through the admin API
// (an `admin` token in SLUICE_ADMIN_TOKEN). The clear token is printed once.
import type { AdminToken, CreatedToken } from '../rules/admin/tokens-and-audit.js';
import { clientFrom } from './admin-client.js';
import { ADMIN_OPTIONS, JSON_OPTION, type CliIo, parseCommandArgs, processIo, runCli, UsageError } from './cli-io.js';

const USAGE = `usage: sluice tokens <command> [--admin URL]   (an admin token in SLUICE_ADMIN_TOKEN)
  create NAME ROLE [--json]   ROLE: read (the page, GET endpoints), write (rules, overrides, keys), admin (tokens, reloads); prints the token once
  list [--json]
  revoke NAME                 refused on every instance sharing the rule store within a second
`;

export function run(argv: string[], io: CliIo = processIo): Promise<number> {
  return runCli(io, USAGE, async () => {
    const [command, ...rest] = argv;
    const { positional, options } = parseCommandArgs(rest, { ...ADMIN_OPTIONS, ...JSON_OPTION });
    const client = clientFrom(options, io);
    switch (command) {
      case 'create': {
        const [name, role] = positional;
        if (!name || !role) throw new UsageError('missing NAME or ROLE: sluice tokens create NAME read|write|admin');
        const created = await client.call<CreatedToken>('POST', '/tokens', { name, role });
        if (options.has('json')) io.out(`${JSON.stringify(created)}\n`);
        else io.out(`name:  ${created.name}\nrole:  ${created.role}\ntoken: ${created.token}\n(store the token now: it is not shown again)\n`);
        return 0;
      }
      case 'list': {
        const { tokens } = await client.call<{ tokens: AdminToken[] }>('GET', '/tokens');
        if (options.has('json')) io.out(`${JSON.stringify(tokens, null, 2)}\n`);
        else for (const t of tokens) io.out(`${t.name}\t${t.role}\tcreated ${t.createdAt}\n`);
        return 0;
      }
      case 'revoke': {
        const name = positional[0];
        if (!name) throw new UsageError('missing NAME: sluice tokens revoke NAME');
        await client.call('DELETE', `/tokens/${encodeURIComponent(name)}`);
        io.out(`revoked ${name}\n`);
        return 0;
      }
      default:
        throw new UsageError(command ? `unknown command: tokens ${command}` : 'missing command');
    }
  });
}

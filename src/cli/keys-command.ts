// `sluice keys create|list|revoke`: API keys through the admin API. The clear key
// is printed once, at creation; it cannot be shown again.
import { clientFrom } from './admin-client.js';
import { ADMIN_OPTIONS, JSON_OPTION, type CliIo, parseCommandArgs, processIo, runCli, UsageError } from './cli-io.js';
import type { ApiKeyInfo, CreatedKey } from '../rules/store.js';

const USAGE = `usage: sluice keys <command> [--admin URL]   (token from SLUICE_ADMIN_TOKEN)
  create TENANT            create a key for TENANT; prints the key once
  list [--tenant T] [--json]
  revoke ID                revoke a key: it stops working on every instance within a second
`;

export function run(argv: string[], io: CliIo = processIo): Promise<number> {
  return runCli(io, USAGE, async () => {
    const [command, ...rest] = argv;
    const { positional, options } = parseCommandArgs(rest, { ...ADMIN_OPTIONS, ...JSON_OPTION, tenant: { type: 'string' } });
    const client = clientFrom(options, io);
    switch (command) {
      case 'create': {
        const tenantOption = options.get('tenant');
        const tenant = positional[0] ?? (typeof tenantOption === 'string' ? tenantOption : undefined);
        if (!tenant) throw new UsageError('missing TENANT: sluice keys create TENANT');
        const created = await client.call<CreatedKey>('POST', '/keys', { tenant });
        if (options.has('json')) io.out(`${JSON.stringify(created)}\n`);
        else io.out(`id:     ${created.id}\ntenant: ${created.tenant}\nkey:    ${created.key}\n(store the key now: it is not shown again)\n`);
        return 0;
      }
      case 'list': {
        const tenant = options.get('tenant');
        const query = typeof tenant === 'string' ? `?tenant=${encodeURIComponent(tenant)}` : '';
        const { keys } = await client.call<{ keys: ApiKeyInfo[] }>('GET', `/keys${query}`);
        if (options.has('json')) io.out(`${JSON.stringify(keys, null, 2)}\n`);
        else for (const k of keys) io.out(`${k.id}\t${k.tenant}\tcreated ${k.createdAt}\t${k.revokedAt ? `revoked ${k.revokedAt}` : 'active'}\n`);
        return 0;
      }
      case 'revoke': {
        const id = positional[0];
        if (!id) throw new UsageError('missing ID: sluice keys revoke ID');
        const revoked = await client.call<ApiKeyInfo>('DELETE', `/keys/${encodeURIComponent(id)}`);
        io.out(`revoked ${revoked.id} (tenant ${revoked.tenant}) at ${revoked.revokedAt}\n`);
        return 0;
      }
      default:
        throw new UsageError(command ? `unknown command: keys ${command}` : 'missing command');
    }
  });
}

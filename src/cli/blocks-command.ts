// `sluice blocks list|lift`: the penalty box's running blocks through the admin
// API (GET /blocks, DELETE /blocks/{id}). Keys are shown hashed, as the API
// lists them; a lift is audited by the API.
import { clientFrom } from './admin-client.js';
import { ADMIN_OPTIONS, JSON_OPTION, type CliIo, parseCommandArgs, processIo, runCli, UsageError } from './cli-io.js';

const USAGE = `usage: sluice blocks <command> [--admin URL]   (token from SLUICE_ADMIN_TOKEN)
  list [--limit N] [--json]   the keys a penalty box blocks now, soonest to end first, with the time left
  lift ID                     lift a block (ID as listed) and forgive its level; audited
`;

interface Block {
  id: string;
  tenant?: string;
  limit?: string;
  blockedUntilMs: number;
  remainingMs: number;
}

/** `1h 02m 03s`, `4m 05s`, `6s`: the time left, rounded up to the second. */
export function formatRemaining(ms: number): string {
  const total = Math.ceil(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const pad = (n: number) => String(n).padStart(2, '0');
  if (h > 0) return `${h}h ${pad(m)}m ${pad(s)}s`;
  if (m > 0) return `${m}m ${pad(s)}s`;
  return `${s}s`;
}

export function run(argv: string[], io: CliIo = processIo): Promise<number> {
  return runCli(io, USAGE, async () => {
    const [command, ...rest] = argv;
    const { positional, options } = parseCommandArgs(rest, { ...ADMIN_OPTIONS, ...JSON_OPTION, limit: { type: 'string' } });
    const client = clientFrom(options, io);
    switch (command) {
      case 'list': {
        const limit = options.get('limit');
        const query = typeof limit === 'string' ? `?limit=${encodeURIComponent(limit)}` : '';
        const { blocks } = await client.call<{ blocks: Block[] }>('GET', `/blocks${query}`);
        if (options.has('json')) io.out(`${JSON.stringify(blocks, null, 2)}\n`);
        else if (blocks.length === 0) io.out('no key is blocked\n');
        else for (const b of blocks) io.out(`${b.id}\t${b.tenant ?? '-'}\t${b.limit ?? '-'}\t${formatRemaining(b.remainingMs)} left\tuntil ${new Date(b.blockedUntilMs).toISOString()}\n`);
        return 0;
      }
      case 'lift': {
        const id = positional[0];
        if (!id) throw new UsageError('missing ID: sluice blocks lift ID (as sluice blocks list shows it)');
        const { lifted } = await client.call<{ lifted: Block }>('DELETE', `/blocks/${encodeURIComponent(id)}`);
        io.out(`lifted ${lifted.id}${lifted.limit ? ` (limit ${lifted.limit})` : ''}: ${formatRemaining(lifted.remainingMs)} were left\n`);
        return 0;
      }
      default:
        throw new UsageError(command ? `unknown command: blocks ${command}` : 'missing command');
    }
  });
}

// `sluice reload [--admin URL]`: asks a running gateway to re-read its config
// file (POST /reload on the admin API; the same as SIGHUP to its process). An
// invalid file is reported with file:line and the gateway keeps its config.
import { clientFrom } from './admin-client.js';
import { ADMIN_OPTIONS, type CliIo, parseCommandArgs, processIo, runCli, UsageError } from './cli-io.js';
import type { ReloadReport } from '../admin/config-reload.js';

const USAGE = `usage: sluice reload [--admin URL]   (token from SLUICE_ADMIN_TOKEN)
  re-reads the running gateway's config file; an invalid file is refused and the old config keeps serving
`;

export function run(argv: string[], io: CliIo = processIo): Promise<number> {
  return runCli(io, USAGE, async () => {
    const { positional, options } = parseCommandArgs(argv, ADMIN_OPTIONS);
    if (positional.length > 0) throw new UsageError(`unexpected argument ${positional[0]}`);
    const report = await clientFrom(options, io).call<ReloadReport>('POST', '/reload');
    if (report.outcome !== 'applied') return 1;
    io.out(`config reloaded (hash ${report.hash}, ${report.loadedAt})\n`);
    if (report.needsRestart.length > 0) io.out(`changed but applied only after a restart: ${report.needsRestart.join(', ')}\n`);
    return 0;
  });
}

// `sluice audit`: the audit log through the admin API (any role), every page of
// it, as JSON lines or CSV (csv-stringify quotes what needs quoting). A `read`
// token's refused write puts text of its choosing in the log (its path is the
// target), so a CSV cell that a spreadsheet would run as a formula (= + - @,
// tab, CR) is prefixed with a single quote (OWASP's CSV injection advice).
import { stringify } from 'csv-stringify/sync';
import type { AuditEntry } from '../rules/admin/tokens-and-audit.js';
import { clientFrom } from './admin-client.js';
import { ADMIN_OPTIONS, type CliIo, parseCommandArgs, processIo, runCli, UsageError } from './cli-io.js';

const USAGE = `usage: sluice audit [--since TIME] [--until TIME] [--actor NAME] [--kind KIND] [--format json|csv] [--admin URL]
  TIME: ISO 8601 (2026-12-01T00:00:00Z); KIND: rule, override, key, token, bucket, reload
  json (default): one entry per line, newest first; csv: a header line, before/after as JSON text
`;

const COLUMNS = ['id', 'at', 'actor', 'address', 'kind', 'action', 'target', 'outcome', 'error', 'before', 'after'] as const;
const FILTERS = ['since', 'until', 'actor', 'kind'] as const;

export function run(argv: string[], io: CliIo = processIo): Promise<number> {
  return runCli(io, USAGE, async () => {
    const { positional, options } = parseCommandArgs(argv, { ...ADMIN_OPTIONS, format: { type: 'string' }, ...Object.fromEntries(FILTERS.map((name) => [name, { type: 'string' as const }])) });
    if (positional.length > 0) throw new UsageError(`unexpected argument ${positional[0]}`);
    const format = options.get('format') ?? 'json';
    if (format !== 'json' && format !== 'csv') throw new UsageError('--format must be json or csv');
    const client = clientFrom(options, io);
    const query = new URLSearchParams({ limit: '1000' });
    for (const name of FILTERS) {
      const value = options.get(name);
      if (typeof value === 'string') query.set(name, value);
    }
    if (format === 'csv') io.out(csv([COLUMNS as unknown as string[]]));
    for (;;) {
      const page = await client.call<{ entries: AuditEntry[]; next?: string }>('GET', `/audit?${query}`);
      io.out(format === 'csv' ? csv(page.entries.map(csvRow)) : page.entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
      if (!page.next) return 0;
      query.set('cursor', page.next);
    }
  });
}

/** Rows as CSV text, formula-like cells defused. */
const csv = (rows: string[][]): string => stringify(rows, { escape_formulas: true });

function csvRow(entry: AuditEntry): string[] {
  return COLUMNS.map((column) => {
    const value = entry[column];
    if (column === 'before' || column === 'after') return JSON.stringify(value ?? null);
    return value === undefined ? '' : String(value);
  });
}

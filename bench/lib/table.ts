// Plain-text tables for the console and Markdown tables for the report.
export type Cell = string | number | undefined;

const show = (cell: Cell): string => {
  if (cell === undefined || (typeof cell === 'number' && Number.isNaN(cell))) return '–';
  if (typeof cell === 'number') return Number.isInteger(cell) ? cell.toLocaleString('en-US') : cell.toLocaleString('en-US', { maximumFractionDigits: 2 });
  return cell;
};

export function textTable(header: string[], rows: Cell[][]): string {
  const text = [header, ...rows.map((row) => row.map(show))];
  const widths = header.map((_, i) => Math.max(...text.map((row) => (row[i] ?? '').length)));
  const line = (row: string[]) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  return [line(text[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...text.slice(1).map(line)].join('\n');
}

export function markdownTable(header: string[], rows: Cell[][]): string {
  const line = (row: string[]) => `| ${row.join(' | ')} |`;
  return [line(header), line(header.map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.map((row) => line(row.map(show)))].join('\n');
}

// Writes docs/errors.md from the error catalogue (src/core/error-codes.ts):
//   node --import tsx scripts/errors-doc.ts          prints it
//   node --import tsx scripts/errors-doc.ts --write  writes docs/errors.md
// test/docs/errors.test.ts fails when the page and the catalogue differ.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CLI_ERRORS, GATEWAY_ERRORS, SLUICE_ERRORS } from '../src/core/error-codes.js';

export const ERRORS_DOC = fileURLToPath(new URL('../docs/errors.md', import.meta.url));

type Row = [code: string, status: string, meaning: string, action: string];

function table(header: Row, rows: Row[]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

export function renderErrorsDoc(): string {
  const gateway = Object.entries(GATEWAY_ERRORS).map(([name, e]): Row => [`\`${name}\``, String(e.status), e.meaning, e.action]);
  const sluice = Object.entries(SLUICE_ERRORS).map(([code, e]): Row => [`\`${code}\``, String(e.status), e.meaning, e.action]);
  const cli = Object.entries(CLI_ERRORS).map(([code, e]): Row => [`\`${code}\``, `exit ${e.exit}`, e.meaning, e.action]);
  return `# Errors

<!-- Generated from src/core/error-codes.ts by scripts/errors-doc.ts: edit the catalogue, then run
     node --import tsx scripts/errors-doc.ts --write -->

Every error code a user of Sluice can see, with what to do about it. Errors
come in two spellings, because there are two wire formats: the gateway answers
its API clients with a short name, the admin API, the library and the CLI with
an \`ERR_*\` code.

## Gateway responses

What the gateway answers a client itself (anything else comes from the
upstream): \`{"error":"<name>"}\` with the status below. The 429 body also
carries \`retryAfterMs\` (or, with \`headers.problemJson: true\`, is an RFC 9457
problem document); the 503s carry \`Retry-After\`. The Express and Fastify
adapters answer \`missing_api_key\`, \`rate_limited\` and \`store_unavailable\` the
same way.

${table(['name', 'status', 'meaning', 'what to do'], gateway)}

## Admin API, library, config and CLI

The admin API answers \`{"error":{"code","field","message"}}\` with the status
below, \`field\` naming the offending input (e.g. \`body.capacity\`); nothing is
written when a request fails. The library throws \`SluiceError\` with the same
\`code\`, \`field\` and \`status\`. \`sluice check\` and \`sluice start\` print a config
error as \`FILE:LINE: field: message\` and exit 2. The CLI prints a failed call
as \`error: <message> (<code>)\` and exits 1.

${table(['code', 'status', 'meaning', 'what to do'], sluice)}

## CLI only

${table(['code', 'exit', 'meaning', 'what to do'], cli)}
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--write')) writeFileSync(ERRORS_DOC, renderErrorsDoc());
  else process.stdout.write(renderErrorsDoc());
}

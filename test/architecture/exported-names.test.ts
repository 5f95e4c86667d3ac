// No two exported functions in src/ share a name (issue 39): two `loadConfig`s
// that load differently, or two `sendError`s with different bodies, let a
// caller import the wrong one and read right. A name says what the function
// does, so two that do different things are named apart. Read with the
// TypeScript parser: `export function f` and `export const f = (…) => …` (or
// `= function`) count; re-exports do not declare anything and are not counted.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

/**
 * The names that may repeat, and where. Keep this short: each entry is a
 * convention every file in `where` follows, not a collision let through.
 */
const SHARED_NAMES: ReadonlyMap<string, RegExp> = new Map([
  // Every CLI command module exports `run(argv, io)`: cli/main.ts loads the
  // module the command names and calls its `run`, so the name is the contract.
  ['run', /^src\/cli\/[^/]+\.ts$/],
]);

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

const isExported = (node: ts.Node): boolean => ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword);

/** The names of the functions a file's top level exports. */
export function exportedFunctions(path: string, text: string): string[] {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const names: string[] = [];
  for (const statement of file.statements) {
    if (!isExported(statement)) continue;
    if (ts.isFunctionDeclaration(statement) && statement.name) names.push(statement.name.text);
    if (!ts.isVariableStatement(statement)) continue;
    for (const declaration of statement.declarationList.declarations) {
      const init = declaration.initializer;
      if (ts.isIdentifier(declaration.name) && init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init))) names.push(declaration.name.text);
    }
  }
  return names;
}

/** `name: file, file` for each name exported by more than one file, but for SHARED_NAMES within their folder. */
export function sharedNames(files: ReadonlyMap<string, string>): string[] {
  const owners = new Map<string, string[]>();
  for (const [path, text] of files) {
    for (const name of exportedFunctions(path, text)) owners.set(name, [...(owners.get(name) ?? []), path]);
  }
  return [...owners]
    .filter(([name, paths]) => {
      if (paths.length < 2) return false;
      const where = SHARED_NAMES.get(name);
      return where === undefined || paths.some((path) => !where.test(path));
    })
    .map(([name, paths]) => `${name}: ${paths.sort().join(', ')}`)
    .sort();
}

test('no two exported functions in src/ share a name', () => {
  const files = new Map(sourceFiles('src').map((path) => [relative('.', path).split('\\').join('/'), readFileSync(path, 'utf8')] as const));
  assert.deepEqual(sharedNames(files), []);
});

test('the check sees a shared name, in a function and in an arrow, and lets the CLI commands share run', () => {
  const files = new Map([
    ['src/a/one.ts', 'export function loadConfig(file: string) { return file; }\nexport function run() {}\nfunction local() {}\n'],
    ['src/b/two.ts', 'export const loadConfig = (text: string) => text;\nexport const local = 1;\n'],
    ['src/cli/x-command.ts', 'export function run() {}\n'],
    ['src/cli/y-command.ts', 'export async function run() {}\n'],
  ]);
  assert.deepEqual(sharedNames(files), ['loadConfig: src/a/one.ts, src/b/two.ts', 'run: src/a/one.ts, src/cli/x-command.ts, src/cli/y-command.ts']);
  files.delete('src/a/one.ts');
  assert.deepEqual(sharedNames(files), []);
});

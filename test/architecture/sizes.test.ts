// Small files with one job, short functions: every source file stays under 500
// lines and every function under 80, so a concept stays whole in one file and still reads in one sitting. The
// policy models are exempt: each is meant to read line by line beside its Lua
// twin. No function takes more than five parameters: past that, an options
// object names what each argument is at the call.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

const MAX_FILE_LINES = 500;
const MAX_FUNCTION_LINES = 80;
const EXEMPT_FUNCTIONS = /^src\/policies\/[^/]+\/model\.ts$/;
const MAX_PARAMETERS = 5;

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

function longFunctions(path: string, text: string): string[] {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = file.getLineAndCharacterOfPosition(node.getStart(file)).line;
      const end = file.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      if (lines > MAX_FUNCTION_LINES) {
        const name = node.name && ts.isIdentifier(node.name) ? node.name.text : '(anonymous)';
        found.push(`${path}:${start + 1} ${name} (${lines} lines)`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

const files = sourceFiles('src').map((path) => relative('.', path).split('\\').join('/'));

test(`every source file is under ${MAX_FILE_LINES} lines`, () => {
  const long = files
    .map((path) => ({ path, lines: readFileSync(path, 'utf8').split('\n').length }))
    .filter(({ lines }) => lines > MAX_FILE_LINES)
    .map(({ path, lines }) => `${path} (${lines} lines)`);
  assert.deepEqual(long, []);
});

test(`every function is under ${MAX_FUNCTION_LINES} lines (policy models excepted)`, () => {
  const long = files.filter((path) => !EXEMPT_FUNCTIONS.test(path)).flatMap((path) => longFunctions(path, readFileSync(path, 'utf8')));
  assert.deepEqual(long, []);
});

/** Functions, methods and constructors of `text` taking more than MAX_PARAMETERS parameters. */
function longParameterLists(path: string, text: string): string[] {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body && node.parameters.length > MAX_PARAMETERS) {
      const line = file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
      const name = node.name && ts.isIdentifier(node.name) ? node.name.text : ts.isConstructorDeclaration(node) ? 'constructor' : '(anonymous)';
      found.push(`${path}:${line} ${name} (${node.parameters.length} parameters)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

test(`no function takes more than ${MAX_PARAMETERS} parameters`, () => {
  const long = files.flatMap((path) => longParameterLists(path, readFileSync(path, 'utf8')));
  assert.deepEqual(long, []);
});

test('the parameter check finds a long list', () => {
  const found = longParameterLists('x.ts', 'function f(a: number, b: number, c: number, d: number, e: number, g: number) { return a + b + c + d + e + g; }');
  assert.deepEqual(found, ['x.ts:1 f (6 parameters)']);
});

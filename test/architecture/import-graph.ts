// The import graph of src/, read with the TypeScript compiler's parser: every
// relative `import`, `export … from`, `import type`, `import()` and
// `import('…').T` counts, type-only ones included (a type cycle is a cycle of
// meaning, even when it erases at build time).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import ts from 'typescript';

/** file (relative to the root, `/`-separated) → the files it imports. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

function sourceFiles(root: string, dir = '', out: string[] = []): string[] {
  for (const name of readdirSync(join(root, dir))) {
    const path = dir === '' ? name : `${dir}/${name}`;
    if (statSync(join(root, path)).isDirectory()) sourceFiles(root, path, out);
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

export function specifiersOf(path: string, text: string): string[] {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) found.push(node.moduleSpecifier.text);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression)) found.push(node.moduleReference.expression.text);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteralLike(node.arguments[0])) found.push(node.arguments[0].text);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) found.push(node.argument.literal.text);
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

function resolveSpecifier(root: string, from: string, specifier: string): string {
  const target = posix.normalize(posix.join(posix.dirname(from), specifier)).replace(/\.js$/, '.ts');
  if (target.endsWith('.ts') || existsSync(join(root, target))) return target;
  return existsSync(join(root, `${target}.ts`)) ? `${target}.ts` : `${target}/index.ts`;
}

export function importGraph(root: string): ImportGraph {
  const graph = new Map<string, string[]>();
  for (const path of sourceFiles(root)) {
    const relative = specifiersOf(path, readFileSync(join(root, path), 'utf8')).filter((s) => s.startsWith('.'));
    graph.set(path, [...new Set(relative.map((s) => resolveSpecifier(root, path, s)))]);
  }
  return graph;
}

/** Every cycle's files (strongly connected components of more than one file, or a file importing itself), by Tarjan. */
export function cyclesOf(graph: ImportGraph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (file: string) => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const to of graph.get(file) ?? []) {
      if (!index.has(to)) {
        connect(to);
        low.set(file, Math.min(low.get(file) as number, low.get(to) as number));
      } else if (onStack.has(to)) low.set(file, Math.min(low.get(file) as number, index.get(to) as number));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || (graph.get(file) ?? []).includes(file)) cycles.push(component.sort());
  };
  for (const file of [...graph.keys()].sort()) if (!index.has(file)) connect(file);
  return cycles;
}

/** The folder under the root a file belongs to; a file at the root is its own (`app.ts` → `app`). */
export const folderOf = (file: string): string => (file.includes('/') ? (file.split('/')[0] as string) : file.replace(/\.ts$/, ''));

// What a policy can do is asked of its registry entry (src/policies/entry.ts),
// never decided by its name outside src/policies/ (issue 39): a new policy is
// its folder and one registry line, and no file elsewhere has to learn its
// name. This test reads every script under src/ but src/policies/ with the
// TypeScript parser and refuses a comparison of a `policy` with a registered
// name (`rule.policy === 'fixed_window'`, either side, == or !=), a
// `case '<name>':`, an `.includes(` of a list of names, and in the pages a
// `data-policies` list. Naming a policy to build a rule (`{policy:
// 'token_bucket', …}`: the config's default rule, the decision service's fixed
// windows, probe rules, help texts) is a use of it, not a capability, and
// stays allowed.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { POLICIES } from '../../src/policies/index.js';

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (/\.(ts|js|html)$/.test(name)) out.push(path);
  }
  return out;
}

const COMPARISONS = new Set([ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken, ts.SyntaxKind.EqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsToken]);

/** `x.policy` or a variable named `policy`. */
const isPolicyRead = (node: ts.Node): boolean =>
  (ts.isPropertyAccessExpression(node) && node.name.text === 'policy') || (ts.isIdentifier(node) && node.text === 'policy') || (ts.isElementAccessExpression(node) && ts.isStringLiteral(node.argumentExpression) && node.argumentExpression.text === 'policy');

/** `file:line: what` for each place in `text` that decides by one of `names`. */
export function policyNameSwitches(path: string, text: string, names: readonly string[]): string[] {
  const found: string[] = [];
  const isName = (node: ts.Node): boolean => ts.isStringLiteralLike(node) && names.includes(node.text);
  if (path.endsWith('.html')) {
    text.split('\n').forEach((line, index) => {
      for (const match of line.matchAll(/data-policies="([^"]*)"/g)) if (match[1]!.split(/\s+/).some((name) => names.includes(name))) found.push(`${path}:${index + 1}: data-policies="${match[1]}"`);
    });
    return found;
  }
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, path.endsWith('.js') ? ts.ScriptKind.JS : ts.ScriptKind.TS);
  const at = (node: ts.Node) => `${path}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${node.getText().replace(/\s+/g, ' ').slice(0, 80)}`;
  const visit = (node: ts.Node) => {
    if (ts.isBinaryExpression(node) && COMPARISONS.has(node.operatorToken.kind)) {
      if ((isName(node.right) && isPolicyRead(node.left)) || (isName(node.left) && isPolicyRead(node.right))) found.push(at(node));
    } else if (ts.isCaseClause(node) && isName(node.expression)) {
      found.push(at(node.expression));
    } else if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'includes') {
      const list = node.expression.expression;
      if (ts.isArrayLiteralExpression(list) && list.elements.some(isName)) found.push(at(node));
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

test('no file outside src/policies/ decides by a policy name: it asks the registry', () => {
  const found = sourceFiles('src')
    .map((path) => relative('.', path).split('\\').join('/'))
    .filter((path) => !path.startsWith('src/policies/'))
    .flatMap((path) => policyNameSwitches(path, readFileSync(path, 'utf8'), POLICIES));
  assert.deepEqual(found, [], 'ask the policy registry (src/policies/entry.ts) instead, adding a capability to the entries if none says it');
});

test('the check sees each way of switching on a name, and lets a rule be built with one', () => {
  const names = ['token_bucket', 'fixed_window'];
  const code = [
    "if (rule.policy === 'fixed_window') go();", // 1
    "const shapes = 'token_bucket' != rule.policy;", // 2
    "switch (rule.policy) { case 'token_bucket': break; }", // 3
    "const windowed = ['fixed_window', 'x'].includes(rule.policy);", // 4
    "const rule = { policy: 'token_bucket', capacity: 1, refillPerSecond: 1 };", // 5: a use
    "if (rule.policy === 'gcra') go();", // 6: not a registered name here
    "if (policy === 'fixed_window') go();", // 7
    "if (rule.policy === other.policy) go();", // 8: no name
  ].join('\n');
  assert.deepEqual(
    policyNameSwitches('src/x.ts', code, names).map((line) => line.split(': ')[0]),
    ['src/x.ts:1', 'src/x.ts:2', 'src/x.ts:3', 'src/x.ts:4', 'src/x.ts:7'],
  );
  assert.deepEqual(policyNameSwitches('src/ui/rules.js', "if (form.policy !== 'fixed_window') hide();", names).length, 1);
  assert.deepEqual(policyNameSwitches('src/ui/index.html', '<div data-policies="token_bucket gcra"></div>\n<div data-field="x"></div>', names), [
    'src/ui/index.html:1: data-policies="token_bucket gcra"',
  ]);
});

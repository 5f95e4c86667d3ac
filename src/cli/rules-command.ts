// `sluice rules list|get|set|delete|import|export`: rules through the admin API.
// import/export use the config file's `rules:` shape, so rules can live in git.
import { readFileSync, writeFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { type AdminClient, clientFrom } from './admin-client.js';
import { ADMIN_OPTIONS, JSON_OPTION, type CliIo, parseCommandArgs, processIo, runCli, UsageError } from './cli-io.js';
import { SluiceError } from '../core/errors.js';
import type { ZodType } from 'zod';
import { POLICIES, POLICY_REGISTRY } from '../policies/index.js';
import { parseRule, type Rule } from '../policies/rule.js';
import { assertRuleTarget } from '../rules/rule-columns.js';
import type { StoredRule } from '../rules/types.js';

const USAGE = `usage: sluice rules <command> [--admin URL]   (token from SLUICE_ADMIN_TOKEN)
  list [--tenant T] [--json]            list rules
  get TENANT ROUTE                      print one rule as JSON
  set TENANT ROUTE '{"policy":...}'     create or replace a rule (JSON), or with options:
  set TENANT ROUTE --policy token_bucket --capacity 200 --refill-per-second 100 [--shadow]
  delete TENANT ROUTE                   delete a rule
  import FILE [--prune]                 apply a YAML file's rules: list (--prune deletes the rest)
  export [FILE]                         write every rule as YAML (stdout without FILE)
TENANT and ROUTE may be * (any).
`;

export function run(argv: string[], io: CliIo = processIo): Promise<number> {
  return runCli(io, USAGE, async () => {
    const [command, ...rest] = argv;
    const { positional, options } = parseCommandArgs(rest, { ...ADMIN_OPTIONS, ...JSON_OPTION, ...ruleOptions(), tenant: { type: 'string' }, prune: { type: 'boolean' } });
    const client = clientFrom(options, io);
    switch (command) {
      case 'list':
        return list(client, options, io);
      case 'get': {
        const [tenant, route] = need(positional, 2, 'get TENANT ROUTE');
        io.out(`${JSON.stringify(await client.call('GET', rulePath(tenant, route)), null, 2)}\n`);
        return 0;
      }
      case 'set': {
        const [tenant, route, json] = positional as [string, string, string | undefined];
        need(positional, 2, 'set TENANT ROUTE ...');
        const rule = json !== undefined ? parseJson(json) : ruleFromOptions(options);
        const stored = await client.call<StoredRule>('PUT', rulePath(tenant, route), rule);
        io.out(`set ${stored.tenant}/${stored.route}: ${JSON.stringify(stored.rule)}\n`);
        return 0;
      }
      case 'delete': {
        const [tenant, route] = need(positional, 2, 'delete TENANT ROUTE');
        await client.call('DELETE', rulePath(tenant, route));
        io.out(`deleted ${tenant}/${route}\n`);
        return 0;
      }
      case 'import':
        return importRules(client, need(positional, 1, 'import FILE')[0], options.has('prune'), io);
      case 'export':
        return exportRules(client, positional[0], io);
      default:
        throw new UsageError(command ? `unknown command: rules ${command}` : 'missing command');
    }
  });
}

async function list(client: AdminClient, options: Map<string, string | true>, io: CliIo): Promise<number> {
  const tenant = options.get('tenant');
  const query = typeof tenant === 'string' ? `?tenant=${encodeURIComponent(tenant)}` : '';
  const { rules } = await client.call<{ rules: StoredRule[] }>('GET', `/rules${query}`);
  if (options.has('json')) io.out(`${JSON.stringify(rules, null, 2)}\n`);
  else for (const r of rules) io.out(`${r.tenant}\t${r.route}\t${JSON.stringify(r.rule)}\n`);
  return 0;
}

/** Validates the whole file first: a bad entry stops the import before anything is written. */
export function readRulesFile(text: string, file: string): { tenant: string; route: string; rule: Rule }[] {
  const doc = parse(text) as unknown;
  const list = Array.isArray(doc) ? doc : (doc as { rules?: unknown } | null)?.rules;
  if (!Array.isArray(list)) throw new SluiceError('ERR_RULE_INVALID', 'expected a `rules:` list (or a bare list) of { tenant, route, policy, ... }', file);
  return list.map((entry, i) => {
    const field = `${file}: rules[${i}]`;
    if (entry === null || typeof entry !== 'object') throw new SluiceError('ERR_RULE_INVALID', 'must be a map', field);
    const { tenant, route, ...rule } = entry as Record<string, unknown>;
    try {
      assertRuleTarget(tenant, route);
    } catch (error) {
      throw new SluiceError('ERR_ID_INVALID', (error as Error).message, field);
    }
    return { tenant, route: route as string, rule: parseRule(rule, field) };
  });
}

async function importRules(client: AdminClient, file: string, prune: boolean, io: CliIo): Promise<number> {
  const wanted = readRulesFile(readFileSync(file, 'utf8'), file);
  for (const { tenant, route, rule } of wanted) await client.call('PUT', rulePath(tenant, route), rule);
  let deleted = 0;
  if (prune) {
    const keep = new Set(wanted.map((r) => `${r.tenant}\u0000${r.route}`));
    const { rules } = await client.call<{ rules: StoredRule[] }>('GET', '/rules');
    for (const r of rules.filter((r) => !keep.has(`${r.tenant}\u0000${r.route}`))) {
      await client.call('DELETE', rulePath(r.tenant, r.route));
      deleted++;
    }
  }
  io.out(`imported ${wanted.length} rule(s) from ${file}${prune ? `, deleted ${deleted}` : ''}\n`);
  return 0;
}

async function exportRules(client: AdminClient, file: string | undefined, io: CliIo): Promise<number> {
  const { rules } = await client.call<{ rules: StoredRule[] }>('GET', '/rules');
  const text = `# Sluice rules, exported ${new Date().toISOString()}; apply with: sluice rules import FILE\n${formatRules(rules)}`;
  if (file) {
    writeFileSync(file, text);
    io.out(`exported ${rules.length} rule(s) to ${file}\n`);
  } else io.out(text);
  return 0;
}

/** `rules:` as one flow map per rule: `- { tenant: shop-a, route: orders, policy: ..., ... }`. */
export function formatRules(rules: Pick<StoredRule, 'tenant' | 'route' | 'rule'>[]): string {
  if (rules.length === 0) return 'rules: []\n';
  const lines = rules.map((r) => `  - ${stringify({ tenant: r.tenant, route: r.route, ...r.rule }, { collectionStyle: 'flow', lineWidth: 0 }).trim()}`);
  return `rules:\n${lines.join('\n')}\n`;
}

/**
 * The options a rule is given by on the command line: every field of every
 * policy's schema, in kebab case (`--refill-per-second`); a boolean field is
 * a flag (`--shadow`), any other takes a value (JSON for the nested ones:
 * `--lease '{"batch":10}'`). Read off each registered policy's schema, so a
 * new policy's fields are options with nothing written here.
 */
export function ruleOptions(): Record<string, { type: 'string' | 'boolean' }> {
  ruleFields ??= fieldsOfRuleSchema();
  return ruleFields;
}

let ruleFields: Record<string, { type: 'string' | 'boolean' }> | undefined;

function fieldsOfRuleSchema(): Record<string, { type: 'string' | 'boolean' }> {
  const fields: Record<string, { type: 'string' | 'boolean' }> = {};
  for (const policy of POLICIES) {
    const { shape } = POLICY_REGISTRY[policy].schema as unknown as { shape: Record<string, ZodType> };
    for (const [name, field] of Object.entries(shape)) {
      let inner = field;
      while (inner.def.type === 'optional') inner = (inner.def as unknown as { innerType: ZodType }).innerType;
      fields[kebabOf(name)] = { type: inner.def.type === 'boolean' ? 'boolean' : 'string' };
    }
  }
  return fields;
}

const kebabOf = (name: string): string => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const camelOf = (option: string): string => option.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** The rule the options spell (the rule's own options only; the admin API checks it). */
export function ruleFromOptions(options: Map<string, string | true>): Record<string, unknown> {
  const fields = ruleOptions();
  const rule: Record<string, unknown> = {};
  for (const [name, value] of options) {
    if (fields[name] === undefined) continue;
    rule[camelOf(name)] = value === true ? true : coerce(value);
  }
  if (!rule.policy) throw new UsageError('set needs a JSON rule or --policy and its parameters');
  return rule;
}

function coerce(value: string): unknown {
  if (value === 'true' || value === 'false') return value === 'true';
  if (/^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(value)) return Number(value);
  if (value.startsWith('{') || value.startsWith('[')) return parseJson(value);
  return value;
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`the rule is not valid JSON: ${(error as Error).message}`);
  }
}

function need(positional: string[], count: number, form: string): [string, string] {
  if (positional.length < count) throw new UsageError(`missing arguments: sluice rules ${form}`);
  return [positional[0] ?? '', positional[1] ?? ''];
}

const rulePath = (tenant: string, route: string): string => `/rules/${encodeURIComponent(tenant)}/${encodeURIComponent(route)}`;

// Every option of sluice.yaml, read from the schema itself (zod's JSON Schema of
// configFileSchema, with each field's OptionMeta): its path, type, default,
// range, SLUICE_* variable, whether a reload applies it and what it means.
// The reference pages are generated from this list; the SLUICE_* overrides
// (env.ts) come from envOptions, which reads the same metadata from the
// schema's definition directly (building zod's JSON Schema is too slow for
// every process's start), and a test keeps the two equal.
import { z } from 'zod';
import type { OptionMeta } from './option-meta.js';
import { configFileSchema } from './schema.js';

export interface ConfigOption {
  /** `limits.maxQueued`, `routes[].id`. */
  path: string;
  /** The same as keys, `[]` standing for "every entry". */
  keys: string[];
  type: string;
  required: boolean;
  default: string | undefined;
  range: string | undefined;
  description: string | undefined;
  env: string | undefined;
  envNote: string | undefined;
  /** What sets it from the environment: a list (comma-separated), a number (when all digits) or text. */
  envKind: 'list' | 'number' | 'text';
  reload: boolean;
  /** A section (an object with fields of its own), listed for its description only. */
  section: boolean;
}

type Json = { [key: string]: unknown } & OptionMeta;

const children = (node: Json): Json[] => [...((node.anyOf as Json[] | undefined) ?? []), ...((node.oneOf as Json[] | undefined) ?? [])];

/** The options, in the schema's order. Built once. */
export function configOptions(): readonly ConfigOption[] {
  cached ??= Object.freeze(walk(z.toJSONSchema(configFileSchema, { io: 'input', unrepresentable: 'any' }) as Json, [], true));
  return cached;
}
let cached: readonly ConfigOption[] | undefined;

function walk(node: Json, keys: string[], reload: boolean): ConfigOption[] {
  const out: ConfigOption[] = [];
  const properties = (node.properties ?? {}) as Record<string, Json>;
  const required = new Set((node.required as string[] | undefined) ?? []);
  for (const [name, child] of Object.entries(properties)) {
    const path = [...keys, name];
    const childReload = child.reload ?? reload;
    const inner = objectInside(child);
    if (inner) {
      if (child.description !== undefined) out.push(option(child, path, { required: required.has(name), reload: childReload, section: true }));
      out.push(...walk({ ...inner, reload: childReload }, inner === child || inner === child.items ? itemPath(path, inner === child.items) : path, childReload));
    } else {
      out.push(option(child, path, { required: required.has(name), reload: childReload, section: false }));
    }
  }
  return out;
}

const itemPath = (path: string[], isArray: boolean) => (isArray ? [...path, '[]'] : path);

/** The object whose fields are listed under this one: itself, or the entries of an array of objects. */
function objectInside(node: Json): Json | undefined {
  if (node.type === 'object' && node.properties) return node;
  const items = node.items as Json | undefined;
  if (node.type === 'array' && items?.type === 'object' && items.properties) return items;
  return undefined;
}

function option(node: Json, keys: string[], flags: { required: boolean; reload: boolean; section: boolean }): ConfigOption {
  return {
    path: keys.join('.').replaceAll('.[]', '[]'),
    keys,
    type: node.typeText ?? typeOf(node),
    default: node.defaultText ?? (node.default === undefined || (flags.section && node.type === 'object') ? undefined : JSON.stringify(node.default)),
    range: rangeOf(node),
    description: node.description,
    env: node.env,
    envNote: node.envNote,
    envKind: kindOf(node),
    ...flags,
  };
}

function typeOf(node: Json): string {
  const options = children(node);
  if (options.length > 0) return [...new Set(options.map(typeOf))].join(' or ');
  if (node.const !== undefined) return JSON.stringify(node.const);
  if (node.enum) return 'enum';
  if (node.type === 'array') return `list of ${typeOf((node.items ?? {}) as Json)}`;
  if (node.type === 'object') return node.additionalProperties && typeof node.additionalProperties === 'object' ? 'map' : 'object';
  return typeof node.type === 'string' ? node.type : 'any';
}

function rangeOf(node: Json): string | undefined {
  const parts: string[] = [];
  if (Array.isArray(node.enum)) parts.push((node.enum as unknown[]).map((value) => `\`${String(value)}\``).join(', '));
  const low = node.minimum !== undefined ? `${node.minimum}` : node.exclusiveMinimum !== undefined ? `above ${node.exclusiveMinimum}` : undefined;
  const high = node.maximum ?? node.exclusiveMaximum;
  if (low !== undefined && high !== undefined) parts.push(low.startsWith('above') ? `${low}, at most ${high}` : `${low} to ${high}`);
  else if (low !== undefined) parts.push(low.startsWith('above') ? low : `at least ${low}`);
  else if (high !== undefined) parts.push(`at most ${high}`);
  const span = (min: unknown, max: unknown, unit: string) => {
    if (min === 1 && max === undefined) parts.push(unit === 'characters' ? 'not empty' : 'at least one');
    else if (min !== undefined && max !== undefined) parts.push(`${min} to ${max} ${unit}`);
    else if (min !== undefined) parts.push(`at least ${min} ${unit}`);
    else if (max !== undefined) parts.push(`at most ${max} ${unit}`);
  };
  span(node.minLength, node.maxLength, 'characters');
  span(node.minItems, node.maxItems, 'entries');
  parts.push(...children(node).map(rangeOf).filter((part): part is string => part !== undefined));
  return parts.length > 0 ? parts.join('; ') : undefined;
}

function kindOf(node: Json): ConfigOption['envKind'] {
  const all = [node, ...children(node)];
  if (all.some((each) => each.type === 'array')) return 'list';
  if (all.some((each) => each.type === 'integer' || each.type === 'number')) return 'number';
  return 'text';
}

/** A SLUICE_* variable and the option it sets, as env.ts reads them. */
export type EnvOption = Pick<ConfigOption, 'env' | 'keys' | 'envKind'> & { env: string };

/** The options that name a variable, in the schema's order, from the zod definitions. Built once. */
export function envOptions(): readonly EnvOption[] {
  cachedEnv ??= Object.freeze(envOf(configFileSchema, []));
  return cachedEnv;
}
let cachedEnv: readonly EnvOption[] | undefined;

const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'readonly', 'catch', 'nonoptional']);

interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  options?: z.ZodType[];
}
const defOf = (schema: z.ZodType) => schema._zod.def as unknown as Def;

/** The schema under its wrappers (optional, default, a preprocess or a transform), with the variable any of them names. */
function unwrap(schema: z.ZodType): { inner: z.ZodType; env: string | undefined } {
  let inner = schema;
  let env: string | undefined;
  for (;;) {
    env ??= z.globalRegistry.get(inner)?.env;
    const def = defOf(inner);
    if (WRAPPERS.has(def.type) && def.innerType) inner = def.innerType;
    else if (def.type === 'pipe' && def.in && def.out) inner = defOf(def.in).type === 'transform' ? def.out : def.in;
    else return { inner, env };
  }
}

function envOf(schema: z.ZodType, keys: string[]): EnvOption[] {
  const shape = defOf(unwrap(schema).inner).shape ?? {};
  return Object.entries(shape).flatMap(([name, field]) => {
    const { inner, env } = unwrap(field);
    const path = [...keys, name];
    if (env !== undefined) return [{ env, keys: path, envKind: envKindOf(inner) }];
    return defOf(inner).type === 'object' ? envOf(inner, path) : [];
  });
}

function envKindOf(schema: z.ZodType): ConfigOption['envKind'] {
  const def = defOf(schema);
  const all = def.type === 'union' ? (def.options ?? []).map((option) => defOf(unwrap(option).inner).type) : [def.type];
  if (all.includes('array')) return 'list';
  return all.includes('number') ? 'number' : 'text';
}

// `${VAR}` and `${VAR:-default}` in YAML string values, and the SLUICE_* variables
// that override the file. Expansion walks the parsed document, not the text, so
// a value holding `#` or `:` cannot change the YAML's structure.
import { isMap, isPair, isScalar, isSeq, type Document, type Node } from 'yaml';
import type { ConfigPath } from './config-error.js';
import { type ConfigOption, envOptions } from './options.js';

export type Env = Readonly<Record<string, string | undefined>>;

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
const WHOLE_REFERENCE = /^\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}$/;

export class MissingVariableError extends Error {
  constructor(
    readonly variable: string,
    readonly path: ConfigPath,
    readonly node: Node,
  ) {
    super(`environment variable ${variable} is not set (write \${${variable}:-default} to give a default)`);
  }
}

/** A field whose value came (in whole or part) from `${VAR}` references, so that an error in it names them. */
export interface Expansion {
  path: ConfigPath;
  variables: string[];
}

/**
 * Expands every string scalar in place and returns which fields took which
 * variables. A plain scalar that is one whole reference gets its YAML type back
 * (`${PORT:-80}` is a number).
 */
export function expandDocument(doc: Document, env: Env): Expansion[] {
  const expansions: Expansion[] = [];
  const walk = (node: unknown, path: (string | number)[]) => {
    if (isMap(node)) {
      for (const pair of node.items) {
        if (isPair(pair)) walk(pair.value, [...path, isScalar(pair.key) ? String(pair.key.value) : String(pair.key)]);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, index) => {
        walk(item, [...path, index]);
      });
    } else if (isScalar(node) && typeof node.value === 'string' && node.value.includes('${')) {
      const original = node.value;
      const variables: string[] = [];
      const expanded = original.replace(REFERENCE, (_all, name: string, fallback: string | undefined) => {
        const value = env[name];
        variables.push(name);
        if (value !== undefined && !(fallback !== undefined && value === '')) return value;
        if (fallback !== undefined) return fallback;
        throw new MissingVariableError(name, path, node);
      });
      node.value = node.type === 'PLAIN' && WHOLE_REFERENCE.test(original) ? retype(expanded) : expanded;
      expansions.push({ path, variables });
    }
  };
  walk(doc.contents, []);
  return expansions;
}

/** The variables `${VAR}` references in a config's text name (in comments too: a warning is the only use). */
export function referencedVariables(text: string): string[] {
  return [...new Set(Array.from(text.matchAll(REFERENCE), (match) => match[1]!))];
}

/** ` (its value came from ${A}, ${B})` when the failing `path` was expanded from variables, else ''. Never the value: it may be a secret. */
export function expandedFrom(expansions: Expansion[], path: ConfigPath): string {
  const expansion = expansions.find((entry) => entry.path.every((part, index) => path[index] === part));
  if (!expansion) return '';
  const names = [...new Set(expansion.variables)].map((name) => `\${${name}}`).join(', ');
  return ` (its value came from ${names})`;
}

function retype(text: string): string | number | boolean {
  if (/^-?\d+(?:\.\d+)?$/.test(text)) return Number(text);
  if (text === 'true' || text === 'false') return text === 'true';
  return text;
}

interface Override {
  variable: string;
  path: ConfigPath;
  value: unknown;
}

/** How each kind of option reads its variable: a list is comma-separated, a number is one when all digits. */
const CONVERT: Record<ConfigOption['envKind'], (text: string) => unknown> = {
  list: (text) => text.split(',').map((part) => part.trim()).filter(Boolean),
  number: (text) => (/^\d+$/.test(text) ? Number(text) : text),
  text: (text) => text,
};

/**
 * The SLUICE_* overrides present in `env`, each with the config field it sets:
 * every option whose schema names a variable (`env` in its OptionMeta).
 */
export function envOverrides(env: Env): Override[] {
  const out: Override[] = [];
  for (const option of envOptions()) {
    const text = env[option.env];
    if (text !== undefined && text !== '') out.push({ variable: option.env, path: option.keys, value: CONVERT[option.envKind](text) });
  }
  return out;
}

/** Writes the overrides into the plain object read from the file. */
export function applyOverrides(raw: Record<string, unknown>, overrides: Override[]): void {
  for (const { path, value } of overrides) {
    let target = raw;
    for (const part of path.slice(0, -1)) {
      const next = target[part as string];
      if (next === null || typeof next !== 'object' || Array.isArray(next)) target[part as string] = {};
      target = target[part as string] as Record<string, unknown>;
    }
    target[path[path.length - 1] as string] = value;
    if (path[0] === 'store') useRedisAt(raw.store as Record<string, unknown>, path[1] as string);
  }
}

const REDIS_TARGETS = ['url', 'cluster', 'sentinel'];

/** A Redis URL, cluster or sentinel in the environment means "use that Redis", whatever the file said. */
function useRedisAt(store: Record<string, unknown>, field: string): void {
  if (!REDIS_TARGETS.includes(field)) return;
  store.type = 'redis';
  for (const other of REDIS_TARGETS) if (other !== field) delete store[other];
}

/** The variable that set `path` (or one of its parents), if any. */
export function overrideFor(overrides: Override[], path: ConfigPath): string | undefined {
  return overrides.find((override) => override.path.every((part, index) => path[index] === part))?.variable;
}

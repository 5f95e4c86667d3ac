// Every YAML snippet in README.md and docs/ still loads as written: a whole
// config through the real loader (decision service included), a section of one
// through that section's schema, a few routes (a list under `routes:`) as the
// routes of a config, an envoyproxy/ratelimit file through its parser; and
// every config in examples/ loads from its file.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { configFileSchema } from '../../src/config/schema.js';
import { parseRule } from '../../src/policies/rule.js';
import { parseEnvoyConfig } from '../../src/decision-service/envoy-config.js';
import { loadConfig, parseConfig } from '../../src/decision-service/load-config.js';

const ROOT = resolve(import.meta.dirname, '../..');
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

interface Snippet {
  page: string;
  line: number;
  text: string;
}

function snippets(): Snippet[] {
  const out: Snippet[] = [];
  for (const page of PAGES) {
    const markdown = readFileSync(join(ROOT, page), 'utf8');
    for (const match of markdown.matchAll(/^```ya?ml\n([\s\S]*?)^```/gm)) {
      out.push({ page, line: markdown.slice(0, match.index).split('\n').length, text: match[1]! });
    }
  }
  return out;
}

/** Each `${VAR}` the snippet names without a default, set to a value that passes as a key or, for `…_URL`, an upstream. */
function envFor(text: string): Record<string, string> {
  const bare = [...text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map(([, name]) => name!);
  return Object.fromEntries(bare.map((name) => [name, name.endsWith('_URL') ? 'http://127.0.0.1:9000' : `doc-${name.toLowerCase()}-value`]));
}

const SECTIONS = new Set(Object.keys(configFileSchema.shape));

/** What kind of YAML a snippet is, by its shape. */
function kindOf(value: unknown): 'config' | 'section' | 'routes' | 'envoy' | 'other' {
  if (Array.isArray(value)) return value.every((entry) => typeof entry === 'object' && entry !== null && 'path' in entry) ? 'routes' : 'other';
  if (value === null || typeof value !== 'object') return 'other';
  const keys = Object.keys(value);
  if (keys.includes('domain') && keys.includes('descriptors')) return 'envoy';
  if (!keys.every((key) => SECTIONS.has(key))) return 'other';
  return keys.includes('routes') ? 'config' : 'section';
}

/** A snippet's YAML with its leading indentation removed (a fragment cut from inside a list). */
const dedented = (text: string) => {
  const indent = Math.min(...text.split('\n').filter((line) => line.trim() && !line.trimStart().startsWith('#')).map((line) => line.length - line.trimStart().length));
  return text
    .split('\n')
    .map((line) => line.slice(Math.min(indent, line.length - line.trimStart().length)))
    .join('\n');
};

describe('YAML snippets in README.md and docs/', () => {
  const all = snippets();

  it('finds the snippets, and knows what each is', () => {
    assert.ok(all.length >= 10, `${all.length} snippets`);
    const unknown = all.filter((snippet) => kindOf(parse(dedented(snippet.text))) === 'other');
    assert.deepEqual(unknown.map((snippet) => `${snippet.page}:${snippet.line}`), [], 'a YAML snippet that is neither a Sluice config, a section of one, routes, nor an envoyproxy/ratelimit file');
  });

  for (const snippet of all) {
    it(`${snippet.page}:${snippet.line} loads as written`, () => {
      const text = dedented(snippet.text);
      const value: unknown = parse(text);
      const kind = kindOf(value);
      const options = { source: `${snippet.page}:${snippet.line}`, env: envFor(text), baseDir: join(ROOT, 'examples/decision') };
      if (kind === 'config') parseConfig(text, options);
      else if (kind === 'routes') parseConfig(`routes:\n${text.replace(/^/gm, '  ')}`, options);
      else if (kind === 'envoy') parseEnvoyConfig(text, options.source);
      else if (kind === 'section') {
        for (const [key, section] of Object.entries(value as Record<string, unknown>)) {
          const result = configFileSchema.shape[key as keyof typeof configFileSchema.shape].safeParse(section);
          assert.ok(result.success, `${key}: ${result.error?.message}`);
        }
        // Rules are checked by parseRule, as the loader does, with the tenant and route set apart.
        for (const [index, { tenant: _tenant, route: _route, ...rule }] of (((value as { rules?: Record<string, unknown>[] }).rules ?? []).entries())) parseRule(rule, `rules[${index}]`);
      }
    });
  }
});

describe('examples/', () => {
  const files = readdirSync(join(ROOT, 'examples'), { recursive: true, encoding: 'utf8' }).filter((name) => /\.ya?ml$/.test(name) && !/ratelimit-config|envoy|traefik/.test(name));

  it('holds the configs', () => {
    assert.ok(files.length >= 4, files.join(', '));
  });

  for (const file of files) {
    it(`${file} loads`, () => {
      loadConfig(join(ROOT, 'examples', file), envFor(readFileSync(join(ROOT, 'examples', file), 'utf8')));
    });
  }
});

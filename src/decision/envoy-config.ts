// Loads envoyproxy/ratelimit config files (a file, a list, or a directory of
// .yaml/.yml files; one domain each) into descriptor trees. Every error names
// file, line and field, like sluice.yaml's, and says what the reference says.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { ConfigError, type ConfigPath, formatPath } from '../config/config-error.js';
import { describeIssue, lineOf } from '../config/load.js';
import { type DescriptorLevel, type Domains, emptyLevel } from './descriptor-tree.js';
import { buildLimit, type Fail } from './envoy-limit.js';
import { type DescriptorFile, envoyFileSchema } from './envoy-schema.js';
import { shapeProblem } from './envoy-yaml-shape.js';
import { isWildcard, wildcardPartsOf } from './wildcard.js';

/** The files a path names: itself, or a directory's YAML files in name order. */
export function envoyConfigFiles(paths: readonly string[]): string[] {
  const out: string[] = [];
  for (const path of paths) {
    let isDir = false;
    try {
      isDir = statSync(path).isDirectory();
    } catch (error) {
      throw new ConfigError(path, undefined, undefined, `cannot read: ${(error as Error).message}`);
    }
    if (!isDir) out.push(path);
    else for (const name of readdirSync(path).sort()) if (/\.ya?ml$/.test(name)) out.push(join(path, name));
  }
  return out;
}

export function loadEnvoyConfig(paths: readonly string[]): Domains {
  const domains = new Map<string, DescriptorLevel>();
  for (const file of envoyConfigFiles(paths)) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new ConfigError(file, undefined, undefined, `cannot read: ${(error as Error).message}`);
    }
    const { domain, level } = parseEnvoyConfig(text, file);
    if (domains.has(domain)) throw new ConfigError(file, 1, 'domain', `duplicate domain '${domain}' in config file (another file configures it)`);
    domains.set(domain, level);
  }
  return domains;
}

/** One file: its domain and its descriptor tree. */
export function parseEnvoyConfig(text: string, source: string): { domain: string; level: DescriptorLevel } {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const lineOfOffset = (offset: number) => lines.linePos(offset).line;
  const firstError = doc.errors[0];
  if (firstError) throw new ConfigError(source, lineOfOffset(firstError.pos[0]), undefined, firstError.message.split('\n')[0] ?? 'invalid YAML');
  const fail: Fail = (path, message) => {
    throw new ConfigError(source, lineOf(doc, path, lineOfOffset), path.length > 0 ? formatPath(path) : undefined, message);
  };
  const shape = shapeProblem(doc);
  if (shape) return fail(shape.path, `config error, ${shape.message}`);
  const parsed = envoyFileSchema.safeParse(doc.toJS() ?? {});
  if (!parsed.success) return fail(...issueOf(parsed.error));
  const domain = parsed.data.domain;
  if (domain === undefined || domain === null || domain === '') return fail(['domain'], 'config file cannot have empty domain');
  return { domain, level: buildLevel(parsed.data.descriptors ?? [], ['descriptors'], `${domain}.`, fail) };
}

/** Where the reference reads each of its keys; it accepts them anywhere, and ignores them elsewhere. */
const KEY_PLACES: Record<string, string> = {
  domain: 'the top level',
  key: 'a descriptor',
  value: 'a descriptor',
  descriptors: 'the top level and a descriptor',
  rate_limit: 'a descriptor',
  shadow_mode: 'a descriptor',
  quota_mode: 'a descriptor',
  detailed_metric: 'a descriptor',
  value_to_metric: 'a descriptor',
  share_threshold: 'a descriptor',
  metadata: 'a descriptor',
  unit: 'rate_limit',
  requests_per_unit: 'rate_limit',
  unlimited: 'rate_limit',
  name: 'rate_limit and a replaces entry',
  replaces: 'rate_limit',
};

/** A schema issue as the reference words an unknown key (one of its keys in the wrong place: where it belongs). */
function issueOf(error: z.ZodError): [ConfigPath, string] {
  const issue = error.issues[0];
  if (issue?.code === 'unrecognized_keys') {
    const path = issue.path.filter((part): part is string | number => typeof part !== 'symbol');
    const key = issue.keys[0] ?? '';
    const place = KEY_PLACES[key];
    const message = place ? `is read only in ${place}: envoyproxy/ratelimit accepts it here and ignores it` : `config error, unknown key '${key}'`;
    return [[...path, key], message];
  }
  const { path, message } = describeIssue(error);
  return [path, message];
}

function buildLevel(descriptors: readonly DescriptorFile[], path: ConfigPath, parentKey: string, fail: Fail): DescriptorLevel {
  const level = emptyLevel();
  const seen = new Set<string>();
  descriptors.forEach((descriptor, index) => {
    const at = [...path, index];
    const key = descriptor.key ?? '';
    if (key === '') fail([...at, 'key'], 'descriptor has empty key');
    const value = descriptor.value ?? '';
    const finalKey = value === '' ? key : `${key}_${value}`;
    if (seen.has(finalKey)) fail([...at, 'key'], `duplicate descriptor composite key '${parentKey}${finalKey}'`);
    seen.add(finalKey);
    if (descriptor.share_threshold && !isWildcard(value)) fail([...at, 'share_threshold'], `share_threshold can only be used with wildcard values (containing '*'), but found key '${finalKey}'`);
    const children = buildLevel(descriptor.descriptors ?? [], [...at, 'descriptors'], `${parentKey}${finalKey}.`, fail);
    const node = { limit: buildLimit(descriptor, at, fail), children };
    if (value === '') level.keyOnly.set(key, node);
    else if (isWildcard(value)) level.wildcards.push({ key, value, parts: wildcardPartsOf(value), shared: descriptor.share_threshold === true, node });
    else level.exact.set(`${key}\u0000${value}`, node);
  });
  return level;
}

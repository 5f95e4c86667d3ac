// Loads envoyproxy/ratelimit config files (a file, a list, or a directory of
// .yaml/.yml files; one domain each) into descriptor trees. Every error names
// file, line and field, like sluice.yaml's.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { ConfigError, type ConfigPath, formatPath } from '../config/config-error.js';
import { describeIssue, lineOf } from '../config/load.js';
import { type DescriptorLevel, type Domains, emptyLevel } from './descriptor-tree.js';
import { buildLimit, type Fail } from './envoy-limit.js';
import { type DescriptorFile, envoyFileSchema } from './envoy-schema.js';

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
    if (domains.has(domain)) throw new ConfigError(file, 1, 'domain', `domain ${domain} is already configured by another file`);
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
    throw new ConfigError(source, lineOf(doc, path, lineOfOffset), formatPath(path), message);
  };
  const parsed = envoyFileSchema.safeParse(doc.toJS() ?? {});
  if (!parsed.success) {
    const { path, message } = describeIssue(parsed.error);
    return fail(path, message);
  }
  return { domain: parsed.data.domain, level: buildLevel(parsed.data.descriptors, ['descriptors'], fail) };
}

function buildLevel(descriptors: readonly DescriptorFile[], path: ConfigPath, fail: Fail): DescriptorLevel {
  const level = emptyLevel();
  const seen = new Set<string>();
  descriptors.forEach((descriptor, index) => {
    const at = [...path, index];
    const composite = descriptor.value === undefined ? descriptor.key : `${descriptor.key}\u0000${descriptor.value}`;
    if (seen.has(composite)) fail([...at, 'key'], `duplicate descriptor ${descriptor.key}${descriptor.value === undefined ? '' : `=${descriptor.value}`} at this level`);
    seen.add(composite);
    const node = { limit: buildLimit(descriptor, at, fail), children: buildLevel(descriptor.descriptors ?? [], [...at, 'descriptors'], fail) };
    if (descriptor.value === undefined || descriptor.value === '') level.keyOnly.set(descriptor.key, node);
    else if (descriptor.value.endsWith('*')) level.prefixed.push({ key: descriptor.key, prefix: descriptor.value.slice(0, -1), node });
    else level.exact.set(composite, node);
  });
  return level;
}

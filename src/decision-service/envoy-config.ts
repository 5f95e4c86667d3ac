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
import { buildLimit, type CalendarUnits, type Fail, type LimitContext } from './envoy-limit.js';
import { type DescriptorFile, envoyFileSchema } from './envoy-schema.js';
import { shapeProblem } from './envoy-yaml-shape.js';
import { dropKey, type MisplacedKey, misplacedKeyOf, misplacedWarning } from './envoy-misplaced-keys.js';
import { isWildcard, wildcardPartsOf } from './wildcard.js';

/** The files a path names: itself, or a directory's YAML files in name order (without `.name` ones when ignoreDotFiles). */
export function envoyConfigFiles(paths: readonly string[], ignoreDotFiles = false): string[] {
  const out: string[] = [];
  for (const path of paths) {
    let isDir = false;
    try {
      isDir = statSync(path).isDirectory();
    } catch (error) {
      throw new ConfigError(path, undefined, undefined, `cannot read: ${(error as Error).message}`);
    }
    if (!isDir) out.push(path);
    else for (const name of readdirSync(path).sort()) if (/\.ya?ml$/.test(name) && !(ignoreDotFiles && name.startsWith('.'))) out.push(join(path, name));
  }
  return out;
}

export interface LoadOptions {
  /** The reference's MERGE_DOMAIN_CONFIG: files naming one domain add their descriptors to it (a key given twice is still an error). */
  mergeDomains?: boolean;
  /** The reference's RUNTIME_IGNOREDOTFILES. */
  ignoreDotFiles?: boolean;
  /** MONTH and YEAR follow the calendar of this time zone instead of the reference's 30 and 365 days (decisionService.calendarUnits). */
  calendarUnits?: CalendarUnits;
}

export interface LoadedEnvoyConfig {
  domains: Domains;
  /** One line per file that had reference keys out of place (loaded, ignored, as the reference does). */
  warnings: string[];
}

export function loadEnvoyConfig(paths: readonly string[]): Domains {
  return loadEnvoyFiles(paths).domains;
}

export function loadEnvoyFiles(paths: readonly string[], options: LoadOptions = {}): LoadedEnvoyConfig {
  const domains = new Map<string, DescriptorLevel>();
  const warnings: string[] = [];
  for (const file of envoyConfigFiles(paths, options.ignoreDotFiles)) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new ConfigError(file, undefined, undefined, `cannot read: ${(error as Error).message}`);
    }
    const merged = (domain: string) => {
      if (domains.has(domain) && !options.mergeDomains) throw new ConfigError(file, 1, 'domain', `duplicate domain '${domain}' in config file (another file configures it)`);
      return domains.get(domain);
    };
    const { domain, level, warning } = parseEnvoyConfig(text, file, merged, options.calendarUnits);
    domains.set(domain, level);
    if (warning) warnings.push(warning);
  }
  return { domains, warnings };
}

export interface ParsedEnvoyFile {
  domain: string;
  level: DescriptorLevel;
  /** Reference keys out of place, ignored (see envoy-misplaced-keys.ts). */
  warning: string | undefined;
}

/** One file: its domain and its descriptor tree (built into `into(domain)`'s level when that gives one: a merge). */
export function parseEnvoyConfig(
  text: string,
  source: string,
  into: (domain: string) => DescriptorLevel | undefined = () => undefined,
  calendarUnits?: CalendarUnits,
): ParsedEnvoyFile {
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
  const raw: unknown = doc.toJS() ?? {};
  const dropped: (MisplacedKey & { line: number | undefined })[] = [];
  let parsed = envoyFileSchema.safeParse(raw);
  for (let misplaced = parsed.success ? undefined : misplacedKeyOf(parsed.error); misplaced; misplaced = parsed.success ? undefined : misplacedKeyOf(parsed.error)) {
    dropped.push({ ...misplaced, line: lineOf(doc, misplaced.path, lineOfOffset) });
    dropKey(raw, misplaced.path);
    parsed = envoyFileSchema.safeParse(raw);
  }
  if (!parsed.success) return fail(...issueOf(parsed.error));
  const domain = parsed.data.domain;
  if (domain === undefined || domain === null || domain === '') return fail(['domain'], 'config file cannot have empty domain');
  const level = buildLevel(parsed.data.descriptors ?? [], ['descriptors'], `${domain}.`, { fail, calendarUnits }, into(domain));
  return { domain, level, warning: dropped.length > 0 ? misplacedWarning(source, dropped) : undefined };
}

/** A schema issue as the reference words it (an unknown key: `config error, unknown key '…'`). */
function issueOf(error: z.ZodError): [ConfigPath, string] {
  const issue = error.issues[0];
  if (issue?.code === 'unrecognized_keys') {
    const path = issue.path.filter((part): part is string | number => typeof part !== 'symbol');
    const key = issue.keys[0] ?? '';
    return [[...path, key], `config error, unknown key '${key}'`];
  }
  const { path, message } = describeIssue(error);
  return [path, message];
}

/** The composite keys a level already holds (`key` or `key_value`), as the reference's duplicate check sees them. */
function keysOf(level: DescriptorLevel): Set<string> {
  const keys = new Set<string>(level.keyOnly.keys());
  for (const exact of level.exact.keys()) keys.add(exact.replace('\u0000', '_'));
  for (const wildcard of level.wildcards) keys.add(`${wildcard.key}_${wildcard.value}`);
  return keys;
}

function buildLevel(descriptors: readonly DescriptorFile[], path: ConfigPath, parentKey: string, context: LimitContext, into?: DescriptorLevel): DescriptorLevel {
  const { fail } = context;
  const level = into ?? emptyLevel();
  const seen = keysOf(level);
  descriptors.forEach((descriptor, index) => {
    const at = [...path, index];
    const key = descriptor.key ?? '';
    if (key === '') fail([...at, 'key'], 'descriptor has empty key');
    const value = descriptor.value ?? '';
    const finalKey = value === '' ? key : `${key}_${value}`;
    if (seen.has(finalKey)) fail([...at, 'key'], `duplicate descriptor composite key '${parentKey}${finalKey}'`);
    seen.add(finalKey);
    if (descriptor.share_threshold && !isWildcard(value)) fail([...at, 'share_threshold'], `share_threshold can only be used with wildcard values (containing '*'), but found key '${finalKey}'`);
    const children = buildLevel(descriptor.descriptors ?? [], [...at, 'descriptors'], `${parentKey}${finalKey}.`, context);
    const node = { limit: buildLimit(descriptor, at, context), children, statSegment: finalKey, valueToMetric: descriptor.value_to_metric === true };
    if (value === '') level.keyOnly.set(key, node);
    else if (isWildcard(value)) level.wildcards.push({ key, value, parts: wildcardPartsOf(value), shared: descriptor.share_threshold === true, node });
    else level.exact.set(`${key}\u0000${value}`, node);
  });
  return level;
}

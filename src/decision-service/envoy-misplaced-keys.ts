// The reference accepts any of its own keys anywhere in a file and reads each
// only in its place (`replaces` directly on a descriptor, `shadow_mode` inside
// `rate_limit`): such a file loads there and the key does nothing. Sluice loads
// it too, drops the key as the reference does, and says so once per file.
import type { z } from 'zod';
import { formatPath } from '../config/config-error.js';

/** Where the reference reads each of its keys. */
export const KEY_PLACES: Record<string, string> = {
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

export interface MisplacedKey {
  readonly path: (string | number)[];
  /** Where the reference reads it. */
  readonly place: string;
}

/** The first schema issue if it is one of the reference's keys out of place. */
export function misplacedKeyOf(error: z.ZodError): MisplacedKey | undefined {
  const issue = error.issues[0];
  if (issue?.code !== 'unrecognized_keys') return undefined;
  const key = issue.keys[0] ?? '';
  const place = KEY_PLACES[key];
  if (place === undefined) return undefined;
  const path = issue.path.filter((part): part is string | number => typeof part !== 'symbol');
  return { path: [...path, key], place };
}

/** Removes the key at `path` from the plain object read from YAML. */
export function dropKey(raw: unknown, path: readonly (string | number)[]): void {
  let target = raw as Record<string | number, unknown>;
  for (const part of path.slice(0, -1)) target = target[part] as Record<string | number, unknown>;
  delete target[path[path.length - 1]!];
}

/** One line for the file: every key dropped, with its line and where the reference reads it. */
export function misplacedWarning(source: string, dropped: readonly (MisplacedKey & { line: number | undefined })[]): string {
  const inFileOrder = [...dropped].sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
  const keys = inFileOrder.map(({ path, place, line }) => `${formatPath(path)}${line === undefined ? '' : ` (line ${line})`} is read only in ${place}`);
  return `${source}: ignored, as envoyproxy/ratelimit ignores them: ${keys.join('; ')}`;
}

// A config error names the file, the line and the field:
// `config.yaml:12: routes[1].upstream: must be an http(s) URL`.
import { SluiceError } from '../core/errors.js';

export type ConfigPath = readonly (string | number)[];

export class ConfigError extends SluiceError {
  readonly line: number | undefined;
  readonly source: string;

  constructor(source: string, line: number | undefined, field: string | undefined, message: string) {
    super('ERR_CONFIG_INVALID', message, field);
    this.name = 'ConfigError';
    this.source = source;
    this.line = line;
    const where = line === undefined ? source : `${source}:${line}`;
    this.message = field ? `${where}: ${field}: ${message}` : `${where}: ${message}`;
  }
}

/** `['routes', 1, 'upstream']` → `routes[1].upstream`. */
export function formatPath(path: ConfigPath): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? part : `.${part}`;
  }
  return out;
}

/** Inverse of formatPath, for fields reported by parseRule (`rules[2].lease.batch`). */
export function parsePath(field: string): (string | number)[] {
  const parts: (string | number)[] = [];
  for (const match of field.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) {
    if (match[2] !== undefined) parts.push(Number(match[2]));
    else if (match[1] !== undefined) parts.push(match[1]);
  }
  return parts;
}

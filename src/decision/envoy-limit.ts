// One descriptor's `rate_limit` (and Sluice's `sluice:` extension) → the rules
// it is decided by. The reference's fixed window is the default; `sluice:` is a
// rule, a list of rules (several limits on one descriptor), or rule fields laid
// over the fixed window (e.g. `sluice: {onStoreDown: open}`).
import type { ConfigPath } from '../config/config-error.js';
import { parsePath } from '../config/config-error.js';
import { isSluiceError } from '../core/errors.js';
import { parseRule, type Rule } from '../core/rule.js';
import type { ConfiguredLimit } from './descriptor-tree.js';
import { type DescriptorFile, UNIT_SECONDS } from './envoy-schema.js';

export type Fail = (path: ConfigPath, message: string) => never;

export function buildLimit(descriptor: DescriptorFile, at: ConfigPath, fail: Fail): ConfiguredLimit | undefined {
  const rateLimit = descriptor.rate_limit;
  if (rateLimit === undefined) {
    if (descriptor.sluice !== undefined) fail([...at, 'rate_limit'], 'is required with sluice: it is the limit Envoy is told (current_limit)');
    return undefined;
  }
  const name = rateLimit.name;
  const replaces = (descriptor.replaces ?? []).map((entry) => entry.name);
  const headerId = headerIdOf(name ?? descriptor.key);
  if (rateLimit.unlimited) {
    if (rateLimit.unit !== undefined || rateLimit.requests_per_unit !== undefined) fail([...at, 'rate_limit', 'unlimited'], 'an unlimited rate_limit takes no unit or requests_per_unit');
    return { name, unit: 'second', requestsPerUnit: 0, unlimited: true, replaces, rules: [], headerId };
  }
  if (rateLimit.unit === undefined) return fail([...at, 'rate_limit', 'unit'], 'is required');
  if (rateLimit.requests_per_unit === undefined) return fail([...at, 'rate_limit', 'requests_per_unit'], 'is required');
  const base = fixedWindow(rateLimit.requests_per_unit, UNIT_SECONDS[rateLimit.unit]);
  const rules = extensionRules(descriptor.sluice, base, [...at, 'sluice'], fail).map((rule) => (descriptor.shadow_mode ? { ...rule, shadow: true } : rule));
  return { name, unit: rateLimit.unit, requestsPerUnit: rateLimit.requests_per_unit, unlimited: false, replaces, rules, headerId };
}

/** The reference's limit: `requests_per_unit` per calendar-aligned unit. */
export const fixedWindow = (requestsPerUnit: number, unitSeconds: number): Rule => ({ policy: 'fixed_window', limit: requestsPerUnit, windowMs: unitSeconds * 1000 });

function extensionRules(extension: unknown, base: Rule, at: ConfigPath, fail: Fail): Rule[] {
  if (extension === undefined) return [base];
  const list = Array.isArray(extension) ? extension : [extension];
  if (list.length === 0) fail(at, 'must list at least one rule');
  return list.map((item, index) => {
    const path = Array.isArray(extension) ? [...at, index] : at;
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return fail(path, 'must be a rule (a mapping)');
    const input = 'policy' in item ? item : { ...base, ...item };
    try {
      return parseRule(input, 'rule');
    } catch (error) {
      if (!isSluiceError(error)) throw error;
      const message = error.field ? error.message.slice(error.field.length + 2) : error.message;
      return fail([...path, ...parsePath(error.field ?? 'rule').slice(1)], message);
    }
  });
}

/** A name usable inside the IETF headers' sf-string: id characters only, at most 64. */
export function headerIdOf(text: string): string {
  const cleaned = text.replace(/[^A-Za-z0-9._~@+-]/g, '_').slice(0, 64);
  return cleaned === '' ? 'rls' : cleaned;
}

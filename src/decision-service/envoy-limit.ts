// One descriptor's `rate_limit` (and Sluice's `sluice:` extension) → the rules
// it is decided by. The reference's fixed window is the default; `sluice:` is a
// rule, a list of rules (several limits on one descriptor), or rule fields laid
// over the fixed window (e.g. `sluice: {onStoreDown: open}`). The reference's
// refusals keep its words (`invalid rate limit unit 'foo'`).
import type { ConfigPath } from '../config/config-error.js';
import { parsePath } from '../config/config-error.js';
import { isSluiceError } from '../core/errors.js';
import { parseRule, type Rule } from '../policies/rule.js';
import type { ConfiguredLimit } from './descriptor-tree.js';
import { type DescriptorFile, type RateLimitFile, UNIT_NAMES, UNIT_SECONDS, type UnitName } from './envoy-schema.js';

export type Fail = (path: ConfigPath, message: string) => never;

/** `decisionService.calendarUnits`: MONTH and YEAR start on the 1st (of the month, of January) at local midnight in this zone. */
export interface CalendarUnits {
  timeZone: string;
}

export interface LimitContext {
  fail: Fail;
  /** Absent (the reference's own behaviour, the default): MONTH is 30 days and YEAR 365, on a grid from the epoch. */
  calendarUnits?: CalendarUnits;
}

export function buildLimit(descriptor: DescriptorFile, at: ConfigPath, { fail, calendarUnits }: LimitContext): ConfiguredLimit | undefined {
  const rateLimit = descriptor.rate_limit;
  if (rateLimit === undefined || rateLimit === null) {
    if (descriptor.sluice !== undefined) fail([...at, 'rate_limit'], 'is required with sluice: it is the limit Envoy is told (current_limit)');
    return undefined;
  }
  const name = rateLimit.name ?? undefined;
  const replaces = replacesOf(rateLimit, [...at, 'rate_limit', 'replaces'], fail);
  const headerId = headerIdOf(name ?? descriptor.key ?? '');
  const unit = unitOf(rateLimit.unit);
  const calendar = calendarUnits !== undefined && (unit === 'month' || unit === 'year') ? { unit, timeZone: calendarUnits.timeZone } : undefined;
  const common = {
    name,
    replaces,
    headerId,
    shadow: descriptor.shadow_mode === true,
    quotaMode: descriptor.quota_mode === true,
    detailedMetric: descriptor.detailed_metric === true,
    ...(calendar ? { calendar } : {}),
  };
  if (rateLimit.unlimited) {
    if (unit !== undefined) fail([...at, 'rate_limit', 'unlimited'], 'should not specify rate limit unit when unlimited');
    if (descriptor.sluice !== undefined) fail([...at, 'sluice'], 'an unlimited rate_limit takes no sluice: rules');
    return { ...common, unit: 'second', requestsPerUnit: 0, unlimited: true, blocked: false, rules: [] };
  }
  if (unit === undefined) return fail([...at, 'rate_limit', 'unit'], `invalid rate limit unit '${rateLimit.unit ?? ''}' (one of ${UNIT_NAMES.join(', ')})`);
  // Unset, the reference reads 0: a limit that refuses every request.
  const requestsPerUnit = rateLimit.requests_per_unit ?? 0;
  if (requestsPerUnit === 0) {
    if (descriptor.sluice !== undefined) fail([...at, 'sluice'], 'requests_per_unit 0 refuses every request: sluice: rules would never apply');
    return { ...common, unit, requestsPerUnit: 0, unlimited: false, blocked: true, rules: [] };
  }
  const base: Rule = calendar ? { policy: 'fixed_window', limit: requestsPerUnit, calendar } : fixedWindow(requestsPerUnit, UNIT_SECONDS[unit]);
  const rules = extensionRules(descriptor.sluice, base, [...at, 'sluice'], fail).map((rule) => (common.shadow ? { ...rule, shadow: true } : rule));
  return { ...common, unit, requestsPerUnit, unlimited: false, blocked: false, rules };
}

/** The reference's unit names, any case; undefined when unknown. */
function unitOf(text: string | null | undefined): UnitName | undefined {
  const lower = (text ?? '').toLowerCase();
  return lower in UNIT_SECONDS ? (lower as UnitName) : undefined;
}

function replacesOf(rateLimit: RateLimitFile, at: ConfigPath, fail: Fail): string[] {
  return (rateLimit.replaces ?? []).map((entry, index) => {
    const name = entry.name ?? '';
    if (name === '') fail([...at, index, 'name'], 'should not have an empty replaces entry');
    if (name === rateLimit.name) fail([...at, index, 'name'], 'replaces should not contain name of same descriptor');
    return name;
  });
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

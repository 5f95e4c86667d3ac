// Turns a route's `limits:` (or its absence: today's single limit per tenant)
// into LimitConfigs, refusing what the gateway cannot enforce safely, each
// error naming its field.
import { formatPath, parsePath } from './config-error.js';
import { MAX_ID_LENGTH } from '../core/ids.js';
import { capacityOf, type Rule } from '../policies/rule.js';
import type { LimitEntry } from '../request-limits/config-schema.js';
import { maxIpIdLength } from '../core/ip-address.js';
import { type KeySource, type LimitConfig, usesTenant } from '../request-limits/types.js';
import { parsePenalty, penaltyConflict, ruleWindowMs } from '../policies/penalty/config.js';
import type { PenaltyConfig } from '../policies/penalty/model.js';
import { isSluiceError } from '../core/errors.js';
import { checkLimitUsage } from '../usage/check-usage.js';
import { BODY_ID_LENGTH } from '../usage/body-key.js';

type Path = (string | number)[];

export interface RouteLimitInput {
  id: string;
  anonymous: boolean;
  cost: number;
  limits?: LimitEntry[] | undefined;
  /** Whether the route requires a JWT (its own auth or the top-level one): claim keys need one. */
  authed?: boolean;
}

export interface LimitCheckContext {
  fail: (path: Path, message: string) => never;
  checkedRule: (input: unknown, field: string) => Rule;
  ipv6Prefix: number;
  /** The ids of all routes, for uniqueness (a limit id is a bucket name). */
  routeIds: ReadonlySet<string>;
  /** Limit ids seen so far, across routes; filled as routes are checked. */
  limitIds: Set<string>;
}

export function checkRouteLimits(route: RouteLimitInput, index: number, ctx: LimitCheckContext): LimitConfig[] {
  const at = (...rest: Path): Path => ['routes', index, ...rest];
  if (route.limits === undefined) {
    if (route.anonymous) ctx.fail(at('limits'), 'is required on an anonymous route: limits keyed by ip, header or route (there is no tenant to key by)');
    return [{ id: route.id, key: { kind: 'tenant' }, rule: undefined }];
  }
  if (route.limits.length === 0) ctx.fail(at('limits'), 'must list at least one limit');
  // `kind: concurrency` entries are checked by checkRouteConcurrency (check-concurrency.ts); each keeps its index for the error's path.
  return route.limits.flatMap((entry, j) => (entry.kind === 'concurrency' ? [] : [checkLimit(route, entry, at('limits', j), ctx)]));
}

function checkLimit(route: RouteLimitInput, entry: LimitEntry, at: Path, ctx: LimitCheckContext): LimitConfig {
  const key = checkLimitKey(route, entry, at, ctx);
  for (const field of ['max', 'leaseTtlMs', 'onStoreDown'] as const) {
    if (entry[field] !== undefined) ctx.fail([...at, field], `applies to kind: concurrency only${field === 'onStoreDown' ? " (a rate limit's is in its rule)" : ''}`);
  }
  let rule: Rule | undefined;
  if (entry.rule !== undefined) rule = ctx.checkedRule(entry.rule, formatPath([...at, 'rule']));
  else if (!usesTenant(key)) ctx.fail([...at, 'rule'], `is required: a limit keyed by ${key.kind} has no tenant to look a rule up by`);
  if (rule !== undefined && entry.cost === undefined && route.cost > capacityOf(rule)) {
    ctx.fail(['routes', at[1] as number, 'cost'], `must be at most ${capacityOf(rule)}, the capacity of limit ${entry.id}: a request costing more could never pass`);
  }
  const penalty = entry.penalty === undefined ? undefined : checkPenalty(entry.penalty, rule, at, ctx);
  return { id: entry.id, key, rule, ...(penalty === undefined ? {} : { penalty }), ...checkLimitUsage(entry, rule, at, ctx.fail) };
}

/**
 * A limit's `penalty:` (policies/penalty/config.ts), its error re-reported at
 * its line. Its block is checked against the inline rule's window; a limit
 * whose rule comes from the rule store has no window to check against here.
 */
function checkPenalty(input: unknown, rule: Rule | undefined, at: Path, ctx: LimitCheckContext): PenaltyConfig {
  const conflict = rule === undefined ? undefined : penaltyConflict(rule);
  if (conflict) ctx.fail([...at, 'rule', conflict.field], conflict.message);
  try {
    return parsePenalty(input, formatPath([...at, 'penalty']), rule === undefined ? 0 : ruleWindowMs(rule));
  } catch (error) {
    if (!isSluiceError(error) || error.field === undefined) throw error;
    return ctx.fail(parsePath(error.field), error.message.slice(error.field.length + 2));
  }
}

/** What every kind of limit checks: its key fits the route, its id is unique and leaves room for the address in a tenant+ip name. */
export function checkLimitKey(route: RouteLimitInput, entry: LimitEntry, at: Path, ctx: LimitCheckContext): KeySource {
  const key = keySourceOf(entry.key);
  const where = [...at, 'key'];
  if (route.anonymous && usesTenant(key)) ctx.fail(where, `${key.kind} cannot key a limit of an anonymous route (it has no tenant): use ip, header or route`);
  if (key.kind === 'claim' && route.authed === false) ctx.fail(where, "keys by a JWT claim: the route needs auth: { kind: jwt, … } (its own or the top-level auth:)");
  if (ctx.limitIds.has(entry.id) || (ctx.routeIds.has(entry.id) && entry.id !== route.id)) ctx.fail([...at, 'id'], `duplicate limit id ${entry.id} (a limit id names one bucket; it may equal its own route's id only)`);
  ctx.limitIds.add(entry.id);
  if (key.kind === 'tenant+ip' || key.kind === 'body') {
    const max = MAX_ID_LENGTH - 1 - (key.kind === 'body' ? BODY_ID_LENGTH : maxIpIdLength(ctx.ipv6Prefix));
    if (entry.id.length > max) ctx.fail([...at, 'id'], `must be at most ${max} characters with key ${key.kind} (the bucket name also holds the ${key.kind === 'body' ? "field's hash" : 'address'})`);
  }
  return key;
}

/**
 * The top-level `globalLimits:`: checked like a route's limits (ids unique
 * across routes and limits, and distinct from every route id), each with its
 * own rule, since there is no route to look a rule up by.
 */
export function checkGlobalLimits(entries: readonly LimitEntry[], ctx: LimitCheckContext): LimitConfig[] {
  const owner: RouteLimitInput = { id: '', anonymous: false, cost: 1 };
  return entries.map((entry, j) => {
    if (entry.kind === 'concurrency') ctx.fail(['globalLimits', j, 'kind'], "concurrency applies to a route's limits only: list it on each route it should cap");
    if (entry.rule === undefined) ctx.fail(['globalLimits', j, 'rule'], 'is required: a global limit has no route to look a rule up by');
    return checkLimit(owner, entry, ['globalLimits', j], ctx);
  });
}

/**
 * The limits a route enforces: its own, then every global one that applies
 * (a tenant-keyed global limit skips anonymous routes: they have no tenant).
 * A route's cost is taken from each, so it must fit every global capacity.
 */
export function withGlobalLimits(route: RouteLimitInput, index: number, own: LimitConfig[], globals: readonly LimitConfig[], fail: LimitCheckContext['fail']): LimitConfig[] {
  // A claim-keyed global limit skips the routes without auth: they have no claims.
  const applying = globals.filter((limit) => !(route.anonymous && usesTenant(limit.key)) && !(limit.key.kind === 'claim' && route.authed === false));
  for (const limit of applying) {
    const capacity = capacityOf(limit.rule!);
    if (route.cost > capacity) fail(['routes', index, 'cost'], `must be at most ${capacity}, the capacity of global limit ${limit.id}: a request costing more could never pass`);
  }
  return [...own, ...applying];
}

function keySourceOf(key: LimitEntry['key']): KeySource {
  if (typeof key === 'object' && 'body' in key) return { kind: 'body', field: key.body.split('.') };
  if (typeof key === 'object') return 'claim' in key ? { kind: 'claim', claim: key.claim } : { kind: 'header', header: key.header.toLowerCase() };
  return { kind: key };
}

/**
 * A tenant-keyed limit without its own rule takes the rule store's: the rules
 * the config file seeds (and the default rule) must hold the route's cost too.
 * Rules written later through the admin API are checked per request instead.
 */
export function checkSeededCosts(
  routes: readonly { id: string; cost: number; limits: readonly LimitConfig[] }[],
  seeded: readonly { tenant: string; route: string; rule: Rule }[],
  defaultRule: Rule,
  fail: (path: Path, message: string) => never,
): void {
  routes.forEach((route, index) => {
    if (route.cost === 1 || !route.limits.some((limit) => limit.rule === undefined)) return;
    for (const entry of [...seeded, { tenant: '*', route: '*', rule: defaultRule }]) {
      if ((entry.route === route.id || entry.route === '*') && capacityOf(entry.rule) < route.cost) {
        const whose = entry.route === '*' && entry.tenant === '*' ? 'the default rule' : `the rule of tenant ${entry.tenant} × route ${entry.route}`;
        fail(['routes', index, 'cost'], `must be at most ${capacityOf(entry.rule)}, the capacity of ${whose}: a request costing more could never pass`);
      }
    }
  });
}

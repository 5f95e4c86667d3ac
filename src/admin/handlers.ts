// What each admin endpoint does, once the request is authenticated and its path
// parsed. Every input is validated before the store is touched.
import { SluiceError } from '../core/errors.js';
import { assertValidId, type Bucket } from '../core/ids.js';
import { parseRule } from '../policies/rule.js';
import type { Engine, EngineHealth } from '../limiter/engine/engine.js';
import { assertValidKeyId } from '../rules/keys.js';
import type { RuleCacheStatus } from '../rules/cache/rule-cache.js';
import { assertTenantId } from '../rules/anonymous-tenant.js';
import { assertRuleTarget } from '../rules/rule-columns.js';
import type { RuleStore } from '../rules/store.js';
import type { RuleResolver } from '../rules/types.js';
import { asObject } from '../dashboard/http-util.js';

export interface AdminCache extends RuleResolver {
  status(): RuleCacheStatus;
  /** The tenant of an active key of the rule store, by its SHA-256 hex (cache/rule-cache.ts). */
  tenantForHash?(keyHash: string): string | undefined;
}

export interface AdminDeps {
  store: RuleStore;
  cache: AdminCache;
  engine: Engine;
  /** Extra readiness detail (e.g. the gateway's own checks); `ready: false` makes /readyz 503. */
  health?: () => Record<string, unknown> & { ready?: boolean };
  /** What /readyz says of the engine, when not `engine.health()` (the primary of workers: theirs). */
  engineHealth?: () => EngineHealth;
  /** How long /readyz waits for the rule store's answer (default 2000 ms). */
  storeProbeTimeoutMs?: number;
}

export interface Reply {
  status: number;
  body?: unknown;
}

const notFound = (what: string): SluiceError => new SluiceError('ERR_NOT_FOUND', `no ${what}`);

export async function readiness(deps: AdminDeps): Promise<Reply> {
  const store = await probeStore(deps);
  const rules = deps.cache.status();
  // The cache notices a frozen store only at its next read; the probe says so now.
  if (!store.reachable) rules.storeReachable = false;
  const extra = deps.health?.() ?? {};
  // Serving from the last loaded set while the store is down is the fallback, and ready.
  const ready = rules.loaded && extra.ready !== false;
  return { status: ready ? 200 : 503, body: { ready, rules, store, engine: deps.engineHealth?.() ?? deps.engine.health(), ...extra } };
}

/** The rule store's own answer, bounded by a short timeout: a frozen database must not stall /readyz. */
async function probeStore(deps: AdminDeps): Promise<{ kind: string; reachable: boolean; error?: string }> {
  const kind = deps.store.kind;
  if (!deps.store.ping) return { kind, reachable: true };
  try {
    await deps.store.ping(deps.storeProbeTimeoutMs ?? 2000);
    return { kind, reachable: true };
  } catch (error) {
    return { kind, reachable: false, error: error instanceof Error ? error.message : String(error) };
  }
}

export async function listRules(deps: AdminDeps, query: URLSearchParams): Promise<Reply> {
  const tenant = query.get('tenant') ?? undefined;
  if (tenant !== undefined) assertRuleTarget(tenant, '*');
  return { status: 200, body: { rules: await deps.store.listRules(tenant === undefined ? { interactive: true } : { tenant, interactive: true }) } };
}

export async function getRule(deps: AdminDeps, tenant: string, route: string): Promise<Reply> {
  assertRuleTarget(tenant, route);
  const stored = await deps.store.getRule(tenant, route);
  if (!stored) throw notFound(`rule for tenant ${tenant} and route ${route}`);
  return { status: 200, body: stored };
}

export async function putRule(deps: AdminDeps, tenant: string, route: string, body: unknown): Promise<Reply> {
  assertRuleTarget(tenant, route);
  const rule = parseRule(asObject(body), 'body');
  return { status: 200, body: await deps.store.putRule(tenant, route, rule) };
}

export async function deleteRule(deps: AdminDeps, tenant: string, route: string): Promise<Reply> {
  assertRuleTarget(tenant, route);
  if (!(await deps.store.deleteRule(tenant, route))) throw notFound(`rule for tenant ${tenant} and route ${route}`);
  return { status: 204 };
}

export async function createKey(deps: AdminDeps, body: unknown): Promise<Reply> {
  const input = asObject(body);
  const unknown = Object.keys(input).filter((key) => key !== 'tenant');
  if (unknown.length > 0) throw new SluiceError('ERR_BAD_REQUEST', `unknown field(s) ${unknown.join(', ')}`, `body.${unknown[0]}`);
  assertTenantId(input.tenant, 'body.tenant');
  return { status: 201, body: await deps.store.createKey(input.tenant) };
}

export async function listKeys(deps: AdminDeps, query: URLSearchParams): Promise<Reply> {
  const tenant = query.get('tenant') ?? undefined;
  if (tenant !== undefined) assertValidId(tenant, 'tenant');
  return { status: 200, body: { keys: await deps.store.listKeys(tenant) } };
}

export async function revokeKey(deps: AdminDeps, id: string): Promise<Reply> {
  assertValidKeyId(id);
  const revoked = await deps.store.revokeKey(id);
  if (!revoked) throw notFound(`key with id ${id}`);
  return { status: 200, body: revoked };
}

/** The bucket `rl:{tenant}:route`, its ids checked first. Buckets are concrete: `*` is a rule target, never a bucket. */
function bucketTarget(tenant: string, route: string): Bucket {
  assertValidId(tenant, 'tenant');
  assertValidId(route, 'route');
  return { tag: tenant, name: route };
}

/** `?plan=` resolves as a request naming that plan would (a JWT's plan claim): docs/plans.md#which-rule-applied. */
export async function inspectBucket(deps: AdminDeps, tenant: string, route: string, query?: URLSearchParams): Promise<Reply> {
  const bucket = bucketTarget(tenant, route);
  const plan = query?.get('plan') ?? undefined;
  if (plan !== undefined) assertValidId(plan, 'plan');
  const resolved = deps.cache.resolve(tenant, route, { plan });
  const info = await deps.engine.inspect(bucket, resolved.rule);
  return {
    status: 200,
    body: { tenant, route, rule: resolved.rule, match: resolved.match, ...(resolved.plan === undefined ? {} : { plan: resolved.plan }), version: resolved.version, ...info },
  };
}

export async function resetBucket(deps: AdminDeps, tenant: string, route: string): Promise<Reply> {
  const bucket = bucketTarget(tenant, route);
  await deps.engine.reset(bucket, deps.cache.resolve(tenant, route).rule);
  return { status: 204 };
}

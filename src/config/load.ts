// Reads sluice.yaml: YAML with node ranges (so every error names its line),
// `${VAR}` expansion, SLUICE_* overrides, the zod schema, parseRule for rules,
// then cross-field checks. The result is a frozen SluiceConfig.
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { availableParallelism } from 'node:os';
import { type Document, isNode, LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { isSluiceError } from '../core/errors.js';
import { parseRule, type Rule } from '../policies/rule.js';
import { ConfigError, type ConfigPath, formatPath, parsePath } from './config-error.js';
import { applyOverrides, type Env, type Expansion, envOverrides, expandDocument, expandedFrom, MissingVariableError, overrideFor } from './env.js';
import { type ConfigFile, configFileSchema } from './schema.js';
import { databaseOf, storeOf } from './connection-config.js';
import type { SeedRule, SluiceConfig } from './types.js';
import { listenAddress, listenersOf, routeOf } from './listeners.js';
import { hashApiKeyHex } from '../rules/keys.js';
import { type DecisionServiceConfig, noDecisionService } from './decision-service.js';
import { checkRouteConcurrency } from './check-concurrency.js';
import { routeAuths } from './route-auth.js';
import { checkLists } from './check-lists.js';
import { notificationsOf } from '../notify/config.js';
import { checkGlobalLimits, checkRouteLimits, checkSeededCosts, type LimitCheckContext, withGlobalLimits } from './check-limits.js';

export { DEFAULT_ADMIN_LISTEN, DEFAULT_LISTEN, listenAddress } from './listeners.js';
export const DEFAULT_RULE: Rule = Object.freeze({ policy: 'token_bucket', capacity: 20, refillPerSecond: 10 });

/**
 * Reads `decisionService:` (listeners, the envoyproxy/ratelimit files it names).
 * The decision service hands its own: decision-service/load-config.ts's loadConfig and
 * parseConfig, the one loader production and the tests use, call the two
 * functions below with it; config never imports the decision service.
 */
export type DecisionServiceParser = (file: ConfigFile, baseDir: string) => DecisionServiceConfig;

/** Loads and validates a config file with this `decisionService:` parser. Throws ConfigError naming file, line and field. */
export function loadConfigWith(file: string, env: Env, decisionService: DecisionServiceParser): SluiceConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(file, undefined, undefined, `cannot read: ${(error as Error).message}`);
  }
  return parseConfigWith(text, { source: file, env, baseDir: dirname(file), decisionService });
}

export interface ParseOptions {
  /** Named in error messages; default `config`. */
  source?: string;
  /** Where `${VAR}` and SLUICE_* come from; default none (tests stay hermetic). */
  env?: Env;
  /** Relative paths in the file (decisionService.envoyConfig) are taken from here; default the working directory. */
  baseDir?: string;
  /** Parses `decisionService:` (decision-service/load-config.ts passes the decision service's); without one, a file with that section is refused. */
  decisionService?: DecisionServiceParser | undefined;
}

export function parseConfigWith(text: string, options: ParseOptions = {}): SluiceConfig {
  const source = options.source ?? 'config';
  const env = options.env ?? {};
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const lineOfOffset = (offset: number) => lines.linePos(offset).line;
  const firstError = doc.errors[0];
  if (firstError) throw new ConfigError(source, lineOfOffset(firstError.pos[0]), undefined, firstError.message.split('\n')[0] ?? 'invalid YAML');

  let expansions: Expansion[];
  try {
    expansions = expandDocument(doc, env);
  } catch (error) {
    if (!(error instanceof MissingVariableError)) throw error;
    throw new ConfigError(source, lineOfNode(error.node, lineOfOffset), formatPath(error.path), error.message);
  }

  // An empty or comment-only file parses to nothing; serving it would serve nothing.
  if (doc.contents === null) throw new ConfigError(source, 1, undefined, 'the file is empty (or only comments): a config needs at least one route under routes:');
  const raw: unknown = doc.toJS() ?? {};
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(source, 1, undefined, 'must be a YAML mapping');
  const overrides = envOverrides(env);
  applyOverrides(raw as Record<string, unknown>, overrides);

  const fail = (path: ConfigPath, message: string): never => {
    const variable = overrideFor(overrides, path);
    if (variable) throw new ConfigError(variable, undefined, formatPath(path), message);
    throw new ConfigError(source, lineOf(doc, path, lineOfOffset), formatPath(path), `${message}${expandedFrom(expansions, path)}`);
  };

  const parsed = configFileSchema.safeParse(raw);
  if (!parsed.success) {
    const { path, message } = describeIssue(parsed.error);
    return fail(path, message);
  }
  return Object.freeze(build(parsed.data, { source, fail, baseDir: options.baseDir ?? '.', env, decisionServiceOf: options.decisionService ?? noDecisionService(fail) })) as SluiceConfig;
}

export type Fail = (path: ConfigPath, message: string) => never;
type CheckedRule = (input: unknown, field: string) => Rule;

interface BuildContext {
  source: string;
  fail: Fail;
  baseDir: string;
  env: Env;
  decisionServiceOf: DecisionServiceParser;
}

function build(file: ConfigFile, { source, fail, baseDir, env, decisionServiceOf }: BuildContext): SluiceConfig {
  const checkedRule = ruleChecker(fail);
  const routeIds = uniqueRouteIds(file, fail);
  const auths = routeAuths(file, { fail, baseDir, env });
  const limitInputs = file.routes.map((route, index) => ({ ...route, authed: auths[index] !== undefined }));
  const limitContext: LimitCheckContext = { fail, checkedRule, ipv6Prefix: file.clientIp.ipv6Prefix, routeIds, limitIds: new Set() };
  const ownLimits = limitInputs.map((route, index) => checkRouteLimits(route, index, limitContext));
  const concurrency = limitInputs.map((route, index) => checkRouteConcurrency(route, index, limitContext));
  const globalLimits = checkGlobalLimits(file.globalLimits, limitContext);
  const routeLimits = limitInputs.map((route, index) => withGlobalLimits(route, index, ownLimits[index] ?? [], globalLimits, fail));
  const rules = seedRules(file, routeIds, checkedRule, fail);
  const defaultRule = file.defaultRule === undefined ? DEFAULT_RULE : checkedRule(file.defaultRule, 'defaultRule');
  checkSeededCosts(file.routes.map((route, index) => ({ ...route, limits: routeLimits[index] ?? [] })), rules, defaultRule, fail);
  if (file.limits.headerTimeoutMs > file.limits.requestTimeoutMs) fail(['limits', 'headerTimeoutMs'], 'must be at most limits.requestTimeoutMs');
  const store = storeOf(file, fail, baseDir, listenAddress);
  const listRoutes = file.routes.map((route, index) => ({ id: route.id, limits: routeLimits[index] ?? [], concurrency: concurrency[index] ?? [], authed: auths[index] !== undefined }));
  return deepFreeze({
    source,
    ...listenersOf(file, baseDir, fail),
    routes: file.routes.map((route, index) => ({ ...routeOf(route, index, routeLimits[index] ?? [], fail), auth: auths[index], concurrency: concurrency[index] ?? [] })),
    tenants: { header: file.tenants.header.toLowerCase(), unknownKeys: file.tenants.unknownKeys, keys: keyHashes(file, fail) },
    defaultRule,
    rules,
    store,
    resilience: resilienceOf(file, store),
    globalLimits,
    lists: checkLists(file.lists, listRoutes, fail),
    clientIp: file.clientIp,
    headers: file.headers,
    limits: file.limits,
    database: databaseOf(file, fail, baseDir),
    decisionService: decisionServiceOf(file, baseDir),
    workers: workersOf(file, store.type, fail),
    instances: file.instances,
    region: file.region,
    dataDir: file.dataDir ?? './data',
    log: { level: file.log?.level ?? 'info', format: file.log?.format },
    tracing: file.tracing,
    notifications: notificationsOf(file, { fail, baseDir, env }),
  });
}

/** The engine's options: the `resilience:` section, with the deadline (absent: adaptive) and WAIT from `store`, and the top-level instances and region. */
function resilienceOf(file: ConfigFile, store: SluiceConfig['store']): SluiceConfig['resilience'] {
  return {
    ...file.resilience,
    ...(store.deadlineMs !== undefined ? { deadlineMs: store.deadlineMs } : {}),
    ...(store.wait ? { replicaWait: store.wait } : {}),
    ...(file.instances !== undefined ? { instances: file.instances } : {}),
    ...(file.region !== undefined ? { region: file.region } : {}),
  };
}

/** Rules go through the same parser as the admin API; its error is re-reported at the rule's line. */
function ruleChecker(fail: Fail): CheckedRule {
  return (input, field) => {
    try {
      return parseRule(input, field);
    } catch (error) {
      if (!isSluiceError(error)) throw error;
      const message = error.field ? error.message.slice(error.field.length + 2) : error.message;
      return fail(parsePath(error.field ?? field), message);
    }
  };
}

function uniqueRouteIds(file: ConfigFile, fail: Fail): Set<string> {
  const routeIds = new Set<string>();
  file.routes.forEach((route, index) => {
    if (routeIds.has(route.id)) fail(['routes', index, 'id'], `duplicate route id ${route.id}`);
    routeIds.add(route.id);
  });
  return routeIds;
}

/** Seed rules name an existing route (or `*`), at most one per tenant and route. */
function seedRules(file: ConfigFile, routeIds: Set<string>, checkedRule: CheckedRule, fail: Fail): SeedRule[] {
  const seen = new Set<string>();
  return file.rules.map((entry, index) => {
    const { tenant, route, ...rest } = entry;
    if (route !== '*' && !routeIds.has(route)) fail(['rules', index, 'route'], `no route has id ${route}`);
    const pair = `${tenant}\u0000${route}`;
    if (seen.has(pair)) fail(['rules', index], `a rule for tenant ${tenant} and route ${route} is already given`);
    seen.add(pair);
    return deepFreeze({ tenant, route, rule: checkedRule(rest, `rules[${index}]`) });
  });
}

/** Configured keys are kept only as SHA-256 hashes; a key listed twice is an error. */
function keyHashes(file: ConfigFile, fail: Fail): { keyHash: string; tenant: string }[] {
  const hashes = new Set<string>();
  return file.tenants.keys.map((entry, index) => {
    const keyHash = hashApiKeyHex(entry.key);
    if (hashes.has(keyHash)) fail(['tenants', 'keys', index, 'key'], 'duplicate key');
    hashes.add(keyHash);
    return { keyHash, tenant: entry.tenant };
  });
}

/** `auto` is this machine's cores; buckets in process memory cannot be shared by several workers. */
function workersOf(file: ConfigFile, storeType: 'memory' | 'redis', fail: Fail): number {
  const workers = file.workers === 'auto' ? availableParallelism() : (file.workers ?? 1);
  if (workers > 1 && storeType === 'memory') {
    fail(['workers'], `${workers} workers need a shared bucket store: the memory store keeps buckets inside one process, so each worker would admit a full limit of its own; set store.url (Redis) or workers: 1`);
  }
  return workers;
}

/** The first zod issue as a path and a message (also used for envoyproxy/ratelimit files). */
export function describeIssue(error: z.ZodError): { path: (string | number)[]; message: string } {
  const issue = error.issues[0];
  if (!issue) return { path: [], message: 'is invalid' };
  const path = issue.path.filter((part): part is string | number => typeof part !== 'symbol');
  if (issue.code === 'unrecognized_keys') {
    return { path: [...path, issue.keys[0] ?? ''], message: `unknown field (expected one of the documented fields)` };
  }
  // A record key that fails its schema (a header name): the key's own message, not zod's "Invalid key in record".
  if (issue.code === 'invalid_key') return { path, message: issue.issues[0]?.message ?? issue.message };
  if (issue.code === 'invalid_type') {
    const missing = /received undefined$/.test(issue.message);
    // zod reports a fraction given for .int() as invalid_type too: the schema's own message says what is wanted.
    if (!missing && issue.expected === 'int') return { path, message: issue.message };
    return { path, message: missing ? 'is required' : `must be ${article(issue.expected)}` };
  }
  return { path, message: issue.message };
}

const article = (type: string) => (type === 'array' || type === 'object' ? `an ${type}` : `a ${type}`);

/** The line of the deepest node of `path` present in the document. */
export function lineOf(doc: Document, path: ConfigPath, lineOfOffset: (offset: number) => number): number | undefined {
  for (let length = path.length; length >= 0; length--) {
    const node = length === 0 ? doc.contents : doc.getIn(path.slice(0, length), true);
    if (isNode(node)) return lineOfNode(node, lineOfOffset);
  }
  return undefined;
}

function lineOfNode(node: { range?: [number, number, number] | null }, lineOfOffset: (offset: number) => number): number | undefined {
  return node.range ? lineOfOffset(node.range[0]) : undefined;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

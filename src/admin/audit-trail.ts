// Every write through the admin API leaves an entry in the audit log: who (the
// token's name), from where, what (kind, endpoint, target), the state before
// and after, and whether it succeeded. A refused or failed write is logged as
// failed, with its error. The entry of a change to the store goes into the
// change's own transaction (admin/call-scope.ts): if the entry cannot be written the
// change is rolled back and the call fails. A bucket reset or a reload (no store
// change) and a failed write get an entry of their own; if the store cannot take
// it, that is logged to stderr and the call's answer still goes back, never
// later than the call's deadline.
import type { IncomingMessage } from 'node:http';
import { isSluiceError } from '../core/errors.js';
import { currentCall, outsideCall } from '../rules/admin/call-scope.js';
import { errorMessage, type RulesLogger } from '../rules/logger.js';
import { waitAtMost } from '../rules/postgres/timed.js';
import { overrideTarget } from '../rules/override-rows.js';
import type { PlanSubject } from '../rules/plans.js';
import type { RuleStore } from '../rules/store.js';
import type { AuditKind, NewAuditEntry } from '../rules/admin/tokens-and-audit.js';
import type { Principal } from './auth.js';
import type { Reply } from './handlers.js';
import { listEntryBefore } from './list-handlers.js';

interface Subject {
  kind: AuditKind;
  /** The endpoint as documented, e.g. `PUT /rules/{tenant}/{route}`. */
  action: string;
  /** Known before the write, or taken from its answer (a new key's id). */
  target: string | undefined;
  before: () => Promise<unknown>;
}

const nothing = async (): Promise<unknown> => null;
/** A read that fails (bad ids, store away) leaves `before` unknown, never fails the write itself. */
const safely = (read: () => Promise<unknown>) => () => read().then((value) => value ?? null, () => null);

/** What a write changes; undefined for a path that is no write endpoint (it changes nothing: 404 or 405). */
export function subjectOf(store: RuleStore, method: string, parts: readonly string[]): Subject | undefined {
  const [head, a, b] = parts;
  const shape = `${method} ${head}/${parts.length}`;
  if (shape === 'PUT rules/3' || shape === 'DELETE rules/3') {
    return { kind: 'rule', action: `${method} /rules/{tenant}/{route}`, target: `${a}/${b}`, before: safely(() => store.getRule(a!, b!)) };
  }
  if (head === 'limits' && b === 'overrides' && parts.length > 3 && (method === 'PUT' || method === 'DELETE')) return overrideSubject(store, method, parts);
  if (head === 'plans' || head === 'assignments') return planSubject(store, method, parts);
  if (shape === 'POST lists/1') return { kind: 'list', action: 'POST /lists', target: undefined, before: nothing };
  if (shape === 'DELETE lists/2') return { kind: 'list', action: 'DELETE /lists/{id}', target: a, before: listEntryBefore(store, a) };
  if (shape === 'POST keys/1') return { kind: 'key', action: 'POST /keys', target: undefined, before: nothing };
  if (shape === 'DELETE keys/2') return { kind: 'key', action: 'DELETE /keys/{id}', target: a, before: safely(async () => withoutSecrets(await store.getKey(a!), 'key')) };
  if (shape === 'POST tokens/1') return { kind: 'token', action: 'POST /tokens', target: undefined, before: nothing };
  if (shape === 'DELETE tokens/2') return { kind: 'token', action: 'DELETE /tokens/{name}', target: a, before: safely(async () => (await store.team.listTokens()).find((t) => t.name === a)) };
  if (shape === 'DELETE buckets/3') return { kind: 'bucket', action: 'DELETE /buckets/{tenant}/{route}', target: `${a}/${b}`, before: nothing };
  // A lifted penalty block is bucket state, like a reset; its target is the block's hashed id, never the key.
  if (shape === 'DELETE blocks/2') return { kind: 'bucket', action: 'DELETE /blocks/{id}', target: a, before: nothing };
  if (shape === 'POST reload/1') return { kind: 'reload', action: 'POST /reload', target: 'config', before: nothing };
  return undefined;
}

/** A plan, one of its limits, or an assignment: `before` is the plan (or the assignment) as it was. */
function planSubject(store: RuleStore, method: string, parts: readonly string[]): Subject | undefined {
  const [head, a, what] = parts;
  if (head === 'assignments') {
    if (parts.length !== 3 || (method !== 'PUT' && method !== 'DELETE')) return undefined;
    const target = `${a}/${what}`;
    const before = safely(() => store.plans.getAssignment(a as PlanSubject, what!));
    return { kind: 'plan', action: `${method} /assignments/{subject}/{id}`, target, before };
  }
  if (method === 'POST' && parts.length === 1) return { kind: 'plan', action: 'POST /plans', target: undefined, before: nothing };
  if (a === undefined) return undefined;
  const before = safely(() => store.plans.get(a));
  if (method === 'DELETE' && parts.length === 2) return { kind: 'plan', action: 'DELETE /plans/{name}', target: a, before };
  if (what !== 'limits' || (method !== 'PUT' && method !== 'DELETE') || parts.length < 4 || parts.length > 5) return undefined;
  const action = parts.length === 4 ? `${method} /plans/{name}/limits/global` : `${method} /plans/{name}/limits/{scope}/{id}`;
  return { kind: 'plan', action, target: parts.slice(1).filter((_, i) => i !== 1).join('/'), before };
}

/** A header selector's clear value never reaches the log: the canonical (hashed) form does, or nothing. */
function overrideSubject(store: RuleStore, method: string, parts: readonly string[]): Subject {
  const action = `${method} /limits/{limitId}/overrides/{selector}`;
  let target: [string, string];
  try {
    target = overrideTarget(parts[1]!, parts.slice(3).join('/'));
  } catch {
    return { kind: 'override', action, target: `${parts[1]} (invalid selector)`, before: nothing };
  }
  return { kind: 'override', action, target: target.join(' '), before: safely(() => store.overrides.get(...target)) };
}

/** Clear keys and tokens are in a creation's answer only; a key's hash stays out of the log too (a reload's config hash stays in). */
function withoutSecrets(value: unknown, kind: AuditKind): unknown {
  if (value === null || typeof value !== 'object') return value ?? null;
  const { key: _k, token: _t, ...rest } = value as Record<string, unknown>;
  if (kind === 'key') delete rest.hash;
  return rest;
}

export interface AuditContext {
  store: RuleStore;
  logger: RulesLogger;
}

/** Runs the write and records it, ok or failed; the write's answer or error is passed on unchanged. */
export async function audited(ctx: AuditContext, principal: Principal, req: IncomingMessage, parts: readonly string[], run: () => Promise<Reply>): Promise<Reply> {
  const subject = subjectOf(ctx.store, req.method ?? 'GET', parts);
  if (!subject) return run();
  const call = currentCall();
  const before = await subject.before();
  const base = { actor: principal.name, address: req.socket.remoteAddress ?? 'unknown', kind: subject.kind, action: subject.action, before };
  const okEntry = (after: unknown): NewAuditEntry => {
    const named = (after as { id?: string; name?: string } | null) ?? {};
    return { ...base, target: subject.target ?? named.id ?? named.name ?? '', after, outcome: 'ok' };
  };
  // What the store's write returns: the answer's body, or whether something was deleted (false, undefined: nothing changed, the call fails).
  if (call) call.entryFor = (result) => (result === false || result === undefined ? undefined : okEntry(result === true ? null : withoutSecrets(result, subject.kind)));
  try {
    const reply = await run();
    if (call) call.entryFor = undefined;
    if (!call?.recorded) await record(ctx, okEntry(withoutSecrets(reply.body, subject.kind)));
    return reply;
  } catch (error) {
    if (call) call.entryFor = undefined;
    // An override's error may quote the selector (a clear header value): its code only.
    const text = isSluiceError(error) ? (subject.kind === 'override' ? error.code : `${error.code}: ${error.message}`) : errorMessage(error);
    // Nothing changed, so this entry stands alone, on its own timeout; the answer waits for it only until the call's deadline.
    const writing = outsideCall(() => record(ctx, { ...base, target: subject.target ?? '(new)', after: before, outcome: 'failed', error: text }));
    const left = (call?.deadline ?? Number.POSITIVE_INFINITY) - Date.now();
    await (left === Number.POSITIVE_INFINITY ? writing : waitAtMost(writing, Math.max(0, left)));
    throw error;
  }
}

async function record(ctx: AuditContext, entry: NewAuditEntry): Promise<void> {
  try {
    await ctx.store.team.appendAudit(entry);
  } catch (error) {
    ctx.logger.error({ err: errorMessage(error), kind: entry.kind, action: entry.action, actor: entry.actor, outcome: entry.outcome }, 'audit entry not written');
  }
}

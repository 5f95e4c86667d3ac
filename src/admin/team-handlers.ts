// The admin API's tokens (/tokens, `admin` role), audit log (/audit), the
// caller's own identity (/whoami) and the tenant of a key's hash
// (/tenants/by-key-hash/{sha256}, which the page asks after hashing a pasted
// key in the browser: the clear key never reaches the server).
import { SluiceError } from '../core/errors.js';
import { AUDIT_KINDS, type AuditFilter, type AuditKind, assertRole, assertTokenName, BOOTSTRAP_NAME } from '../rules/admin/tokens-and-audit.js';
import type { Principal, TokenAuth } from './auth.js';
import type { AdminDeps, Reply } from './handlers.js';
import { asObject } from '../dashboard/http-util.js';

type Allow = (...methods: string[]) => void;

export interface TeamContext {
  deps: AdminDeps;
  auth: TokenAuth;
  principal: Principal;
  method: string;
  body: () => Promise<unknown>;
}

/** `parts[0]` is tokens, audit, whoami or tenants; undefined when none matches. */
export async function routeTeam(ctx: TeamContext, parts: string[], query: URLSearchParams, allow: Allow): Promise<Reply | undefined> {
  const shape = `${parts[0]}/${parts.length}`;
  switch (shape) {
    case 'whoami/1':
      allow('GET');
      return { status: 200, body: ctx.principal };
    case 'tokens/1':
      allow('GET', 'POST');
      return ctx.method === 'GET' ? { status: 200, body: { tokens: await ctx.deps.store.team.listTokens() } } : createToken(ctx, await ctx.body());
    case 'tokens/2':
      allow('DELETE');
      return revokeToken(ctx, parts[1]!);
    case 'audit/1':
      allow('GET');
      return listAudit(ctx.deps, query);
    case 'tenants/3':
      if (parts[1] !== 'by-key-hash') return undefined;
      allow('GET');
      return tenantOfHash(ctx.deps, parts[2]!);
  }
  return undefined;
}

async function createToken(ctx: TeamContext, body: unknown): Promise<Reply> {
  const input = asObject(body);
  const unknown = Object.keys(input).filter((key) => key !== 'name' && key !== 'role');
  if (unknown.length > 0) throw new SluiceError('ERR_BAD_REQUEST', `unknown field(s) ${unknown.join(', ')}`, `body.${unknown[0]}`);
  assertTokenName(input.name, 'body.name');
  assertRole(input.role, 'body.role');
  return { status: 201, body: await ctx.deps.store.team.createToken(input.name, input.role) };
}

async function revokeToken(ctx: TeamContext, name: string): Promise<Reply> {
  if (name === BOOTSTRAP_NAME) throw new SluiceError('ERR_BAD_REQUEST', 'the bootstrap token is SLUICE_ADMIN_TOKEN: change it and restart to revoke it', 'name');
  assertTokenName(name);
  const revoked = await ctx.deps.store.team.revokeToken(name);
  ctx.auth.forget();
  if (!revoked) throw new SluiceError('ERR_NOT_FOUND', `no token named ${name}`);
  return { status: 204 };
}

const MAX_PAGE = 1000;

function timeParam(query: URLSearchParams, name: string): string | undefined {
  const text = query.get(name);
  if (text === null) return undefined;
  const time = Date.parse(text);
  if (Number.isNaN(time)) throw new SluiceError('ERR_BAD_REQUEST', 'must be an ISO 8601 time, e.g. 2026-12-01T13:00:00Z', name);
  return new Date(time).toISOString();
}

function wholeParam(query: URLSearchParams, name: string, fallback: number | undefined, max: number): number | undefined {
  const text = query.get(name);
  if (text === null) return fallback;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < 1 || value > max) throw new SluiceError('ERR_BAD_REQUEST', `must be a whole number from 1 to ${max}`, name);
  return value;
}

/** Newest first; `next` is the cursor of the following page, absent on the last. */
async function listAudit(deps: AdminDeps, query: URLSearchParams): Promise<Reply> {
  const kind = query.get('kind') ?? undefined;
  if (kind !== undefined && !AUDIT_KINDS.includes(kind as AuditKind)) throw new SluiceError('ERR_BAD_REQUEST', `must be one of ${AUDIT_KINDS.join(', ')}`, 'kind');
  const actor = query.get('actor') ?? undefined;
  if (actor !== undefined && actor !== BOOTSTRAP_NAME) assertTokenName(actor, 'actor');
  const filter: AuditFilter = {
    ...{ since: timeParam(query, 'since'), until: timeParam(query, 'until'), actor, kind: kind as AuditKind | undefined },
    ...{ before: wholeParam(query, 'cursor', undefined, Number.MAX_SAFE_INTEGER), limit: wholeParam(query, 'limit', 100, MAX_PAGE)! },
  };
  const entries = await deps.store.team.listAudit(filter);
  const next = entries.length === filter.limit ? String(entries.at(-1)!.id) : undefined;
  return { status: 200, body: { entries, ...(next ? { next } : {}) } };
}

/** The tenant of an active key of the rule store, by the key's SHA-256 (64 hex digits). */
function tenantOfHash(deps: AdminDeps, hash: string): Reply {
  if (!/^[0-9a-f]{64}$/.test(hash)) throw new SluiceError('ERR_BAD_REQUEST', 'must be the SHA-256 of the key as 64 lower-case hex digits', 'hash');
  const tenant = deps.cache.tenantForHash?.(hash);
  if (tenant === undefined) throw new SluiceError('ERR_NOT_FOUND', 'no active key of the rule store has this hash (it may be revoked, unknown, or from the config file)');
  return { status: 200, body: { tenant } };
}

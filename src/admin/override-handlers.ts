// The admin API's per-key overrides: /overrides (all) and
// /limits/{limitId}/overrides[/{selector}]. A selector holds a `/` in a CIDR;
// sent percent-encoded (%2F) or not, the path's remaining segments are joined
// back into it. Every input is validated before the store is touched.
import type { IncomingMessage } from 'node:http';
import { SluiceError } from '../core/errors.js';
import { assertValidId } from '../core/ids.js';
import { parseRule } from '../policies/rule.js';
import { overrideTarget } from '../rules/override-rows.js';
import type { AdminDeps, Reply } from './handlers.js';
import { asObject, readJson } from '../dashboard/http-util.js';

type Allow = (...methods: string[]) => void;

/** `parts` starts with `limits` or `overrides`. */
export async function routeOverrides(deps: AdminDeps, req: IncomingMessage, parts: string[], allow: Allow): Promise<Reply> {
  const [head, limitId, what] = parts;
  if (head === 'overrides' && parts.length === 1) {
    allow('GET');
    return listAllOverrides(deps);
  }
  if (what !== 'overrides' || limitId === undefined) throw new SluiceError('ERR_NOT_FOUND', `no endpoint /${parts.join('/')}; see GET /openapi.json`);
  if (parts.length === 3) {
    allow('GET');
    return listOverrides(deps, limitId);
  }
  const selector = parts.slice(3).join('/');
  allow('GET', 'PUT', 'DELETE');
  if (req.method === 'GET') return getOverride(deps, limitId, selector);
  if (req.method === 'DELETE') return deleteOverride(deps, limitId, selector);
  return putOverride(deps, limitId, selector, await readJson(req));
}

async function listAllOverrides(deps: AdminDeps): Promise<Reply> {
  return { status: 200, body: { overrides: await deps.store.overrides.list({ interactive: true }) } };
}

async function listOverrides(deps: AdminDeps, limitId: string): Promise<Reply> {
  assertValidId(limitId, 'limitId');
  return { status: 200, body: { overrides: await deps.store.overrides.list({ limitId, interactive: true }) } };
}

const notFound = (limitId: string): SluiceError => new SluiceError('ERR_NOT_FOUND', `no override of limit ${limitId} for that selector`);

async function getOverride(deps: AdminDeps, limitId: string, selector: string): Promise<Reply> {
  const [id, canonical] = overrideTarget(limitId, selector);
  const stored = await deps.store.overrides.get(id, canonical);
  if (!stored) throw notFound(id);
  return { status: 200, body: stored };
}

/**
 * The limit id need not be in this instance's config (instances with other
 * configs share the store); an override whose selector does not fit the
 * limit's key (an `ip:` one on a tenant-keyed limit) is never consulted.
 */
async function putOverride(deps: AdminDeps, limitId: string, selector: string, body: unknown): Promise<Reply> {
  const [id, canonical] = overrideTarget(limitId, selector);
  const rule = parseRule(asObject(body), 'body');
  return { status: 200, body: await deps.store.overrides.put(id, canonical, rule) };
}

async function deleteOverride(deps: AdminDeps, limitId: string, selector: string): Promise<Reply> {
  const [id, canonical] = overrideTarget(limitId, selector);
  if (!(await deps.store.overrides.delete(id, canonical))) throw notFound(id);
  return { status: 204 };
}

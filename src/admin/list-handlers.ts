// The admin API's allow and deny lists (docs/lists.md, docs/admin-api.md#lists):
// GET and POST /lists, GET and DELETE /lists/{id}. An entry is checked as the
// config file's are (the same schema, then its routes and limit against this
// instance's config) before the store is touched; a bad one is a 400 naming
// the field. A header's or a claim's value is hashed before it is kept, and
// never echoed: answers and audit entries carry its SHA-256 only.
import type { IncomingMessage } from 'node:http';
import type { ConfigPath } from '../config/config-error.js';
import { checkLists } from '../config/check-lists.js';
import { describeIssue } from '../config/load.js';
import type { SluiceConfig } from '../config/types.js';
import { SluiceError } from '../core/errors.js';
import { entryOfInput, type ListEntryInput, listEntrySchema } from '../lists/config-schema.js';
import { assertListEntryId, listEntryNotFound, listEntryView, type StoredListEntry } from '../rules/list-entries.js';
import type { RuleStore } from '../rules/store.js';
import { asObject, readJson } from '../dashboard/http-util.js';
import type { AdminDeps, Reply } from './handlers.js';

type Allow = (...methods: string[]) => void;

/** What the lists' routes read beside the store: the config this instance serves, to check routes and limits against. */
export interface ListDeps extends AdminDeps {
  explain?: (() => { config: SluiceConfig }) | undefined;
}

/** `parts` starts with `lists`. */
export async function routeLists(deps: ListDeps, req: IncomingMessage, parts: string[], allow: Allow): Promise<Reply> {
  const method = req.method ?? 'GET';
  const [, id] = parts;
  if (parts.length === 1) {
    allow('GET', 'POST');
    if (method === 'GET') return { status: 200, body: { entries: viewsOf(await deps.store.lists.list(), Date.now()) } };
    const entry = checkedEntry(await readJson(req), deps.explain?.().config, Date.now());
    return { status: 201, body: listEntryView(await deps.store.lists.add(entry)) };
  }
  if (parts.length === 2) {
    allow('GET', 'DELETE');
    assertListEntryId(id, 'id');
    if (method === 'DELETE') {
      if (!(await deps.store.lists.delete(id))) throw listEntryNotFound(id);
      return { status: 204 };
    }
    const found = await deps.store.lists.get(id);
    if (!found) throw listEntryNotFound(id);
    return { status: 200, body: viewOf(found, Date.now()) };
  }
  throw new SluiceError('ERR_NOT_FOUND', `no endpoint /${parts.join('/')}; see GET /openapi.json`);
}

const viewOf = (entry: StoredListEntry, now: number) => ({ ...listEntryView(entry), ...(entry.expiresAt !== undefined && entry.expiresAt <= now ? { expired: true } : {}) });
const viewsOf = (entries: readonly StoredListEntry[], now: number) => entries.map((entry) => viewOf(entry, now));

const invalid = (field: ConfigPath, message: string): SluiceError => new SluiceError('ERR_LIST_ENTRY_INVALID', message, ['body', ...field].join('.'));

/**
 * The body as an entry to store: the config file's schema (one match field, a
 * CIDR that parses, allow or deny, an ISO expiry), an expiry still ahead, and,
 * when this instance has a config, routes it has and a rate limit of theirs.
 */
export function checkedEntry(body: unknown, config: SluiceConfig | undefined, now: number): Omit<StoredListEntry, 'id' | 'createdAt'> {
  const parsed = listEntrySchema.safeParse(asObject(body));
  if (!parsed.success) {
    const { path, message } = describeIssue(parsed.error);
    throw invalid(path, message);
  }
  const input: ListEntryInput = parsed.data;
  if (input.expiresAt !== undefined && Date.parse(input.expiresAt) <= now) throw invalid(['expiresAt'], 'must be in the future (an expired entry would never apply)');
  if (config !== undefined) {
    const routes = config.routes.map((route) => ({ id: route.id, limits: route.limits, concurrency: route.concurrency ?? [], authed: route.auth !== undefined }));
    // checkLists names the field as in the config file (`lists.0.routes.1`): the body's is the same past `lists.0`.
    checkLists([input], routes, (path, message) => {
      throw invalid(path.slice(2), message);
    });
  }
  const { id: _id, ...entry } = entryOfInput(input, 'new');
  return entry;
}

/** The audit log's `before` of a list write: the entry as the API shows it. */
export function listEntryBefore(store: RuleStore, id: string | undefined): () => Promise<unknown> {
  return async () => {
    if (id === undefined) return null;
    try {
      const found = await store.lists.get(id);
      return found ? listEntryView(found) : null;
    } catch {
      return null;
    }
  };
}

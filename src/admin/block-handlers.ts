// The penalty box's blocks through the admin API (docs/admin-api.md#penalty-blocks):
// GET /blocks lists the running blocks across the store, DELETE /blocks/{id}
// lifts one (and forgives its level). A block is shown by an id, the SHA-256
// of its penalty key (`~h.` + 32 hex, as bucket keys are hashed elsewhere): the
// key may hold a client's address or a hashed header. A tenant-keyed block also
// names its tenant, and the limit when its bucket name is the limit's id.
import { SluiceError } from '../core/errors.js';
import { hashedId } from '../core/ids.js';
import type { Engine } from '../limiter/engine/engine.js';
import { PENALTY_INDEX_MAX } from '../stores/redis/penalty-script.js';
import type { BlockedKey } from '../stores/store.js';
import type { Reply } from './handlers.js';

export interface BlockView {
  /** SHA-256 of the penalty key, `~h.<32 hex>`: what DELETE /blocks/{id} takes. */
  id: string;
  /** The tenant, when the block's bucket is keyed by one (not by an address, a header or a claim). */
  tenant?: string;
  /** The limit's id, when the bucket's name is it (not a tenant+ip bucket). */
  limit?: string;
  blockedUntilMs: number;
  /** Whole ms until the block ends at the time of the answer. */
  remainingMs: number;
}

const ID = /^~h\.[0-9a-f]{32}$/;
const DEFAULT_LIST = 1000;

/** `pb:{tag}:name` as an operator sees it: hashed, with the tenant and limit when they are plain ids. */
export function blockView(blocked: BlockedKey, nowMs: number): BlockView {
  const view: BlockView = { id: hashedId(blocked.key), blockedUntilMs: blocked.blockedUntilMs, remainingMs: Math.max(0, Math.ceil(blocked.blockedUntilMs - nowMs)) };
  const match = /^pb:\{([^{}]+)\}:(.+)$/.exec(blocked.key);
  if (match === null) return view;
  const [, tag, name] = match;
  // A derived id (`~ip.…`, `~h.…`, `~route`) may carry a client's address: never shown.
  if (!tag!.startsWith('~')) view.tenant = tag!;
  if (!name!.includes('~')) view.limit = name!;
  return view;
}

export async function listBlocks(engine: Engine, query: URLSearchParams): Promise<Reply> {
  const limit = countParam(query.get('limit'));
  const now = Date.now();
  const blocks = (await engine.listBlocked(limit)).map((blocked) => blockView(blocked, now));
  return { status: 200, body: { blocks } };
}

/** Lifts the listed block with this id; 404 when none is running (ended, or lifted already). */
export async function liftBlockById(engine: Engine, id: string): Promise<Reply> {
  if (!ID.test(id)) throw new SluiceError('ERR_BAD_REQUEST', 'must be a block id as GET /blocks lists it (~h. and 32 hex digits)', 'id');
  const now = Date.now();
  const found = (await engine.listBlocked(PENALTY_INDEX_MAX)).find((blocked) => hashedId(blocked.key) === id);
  if (found === undefined || !(await engine.liftBlock(found.key))) throw new SluiceError('ERR_NOT_FOUND', `no running block with id ${id}`);
  return { status: 200, body: { lifted: blockView(found, now) } };
}

function countParam(value: string | null): number {
  if (value === null) return DEFAULT_LIST;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > PENALTY_INDEX_MAX) throw new SluiceError('ERR_BAD_REQUEST', `must be an integer from 1 to ${PENALTY_INDEX_MAX}`, 'limit');
  return n;
}

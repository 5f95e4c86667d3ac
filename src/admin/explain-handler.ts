// GET /explain (role `read`): what the gateway would do with a sample request
// given in the query (method, path, host, header, ip), with each rate limit's
// bucket as it is now (a peek: nothing is charged). The sample's header
// values, API keys among them, are never echoed back or logged: the answer
// names the key by its hash's first digits, a header-keyed bucket by its hash.
import { SluiceError } from '../core/errors.js';
import { withBucketState } from '../explain/bucket-state.js';
import { type ExplainContext, explainSample } from '../explain/explain.js';
import { sampleFromQuery } from '../explain/sample.js';
import type { Engine } from '../limiter/engine/engine.js';
import type { Reply } from './handlers.js';

/** The gateway's current config and resolvers (swapped on a reload); absent where no gateway runs beside the admin API. */
export type ExplainSource = () => ExplainContext;

export async function explainFromQuery(source: ExplainSource | undefined, engine: Pick<Engine, 'inspect'>, query: URLSearchParams): Promise<Reply> {
  if (!source) throw new SluiceError('ERR_NOT_FOUND', 'explain is not available on this instance (no gateway config beside this admin API)');
  const sample = sampleFromQuery(query);
  return { status: 200, body: await withBucketState(await explainSample(source(), sample), engine) };
}

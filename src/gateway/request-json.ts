// The request body read before the decision, for the limits that need it (a
// `key: { body: model }`, an estimate `fromBody: max_tokens`): read whole
// when it fits `limits.bufferBodyBytes` (as the proxy reads it anyway, see
// gateway/request-body.ts) and parsed as JSON; the same bytes then go
// upstream. A larger body streams unread: its fields are missing.
import type { IncomingMessage } from 'node:http';
import { type BodyLimits, type ReadBody, readBody } from './request-body.js';

export interface RequestJson {
  /** What was read: forward() sends it on instead of reading again. */
  readonly read: ReadBody;
  /** The parsed body; undefined when it is absent, too large or not JSON. */
  readonly json: unknown;
}

export async function readRequestJson(req: IncomingMessage, limits: BodyLimits): Promise<RequestJson> {
  const read = await readBody(req, limits);
  if (read.kind !== 'whole' || read.body.length === 0) return { read, json: undefined };
  try {
    return { read, json: JSON.parse(read.body.toString('utf8')) };
  } catch {
    return { read, json: undefined };
  }
}

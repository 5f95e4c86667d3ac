// Log lines about a traced request carry its trace_id and span_id: a child of
// the process's logger whose pino mixin reads the active span, so every
// existing log call on the request path gains them without a change.
import { type Logger, symbols } from 'pino';
import type { Tracing } from './types.js';

type Mixin = (merge: object, level: number, logger: Logger) => object;

/** `logger` with the active span's ids merged into each line (its own mixin, if any, kept). */
export function withTraceFields(logger: Logger, tracing: Pick<Tracing, 'logFields'>): Logger {
  const child = logger.child({});
  const holder = child as unknown as Record<symbol, Mixin | undefined>;
  const own = holder[symbols.mixinSym];
  holder[symbols.mixinSym] = own ? (merge, level, from) => ({ ...own(merge, level, from), ...tracing.logFields() }) : () => tracing.logFields();
  return child;
}

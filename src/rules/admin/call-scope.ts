// One admin call as the rule store sees it: the deadline that bounds every
// store call it makes (the token lookup, the read of the state before, the
// write and its audit entry share one bound, not one each), and the audit entry
// of the change it makes, which the store writes in the change's own
// transaction, so a change is never without its entry nor an entry without its
// change. Carried by AsyncLocalStorage: the handlers and the store's methods
// keep their signatures, and a store call made outside an admin call has no
// scope (its own timeout, no entry).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { NewAuditEntry } from './tokens-and-audit.js';

export interface CallScope {
  /** Epoch ms by our clock: no store call of this admin call is waited on, nor any of its writes let commit, after it (Infinity: no bound). */
  readonly deadline: number;
  /** The entry of the change, from what the store's write method returns; undefined when nothing changed (the call then fails). */
  entryFor: ((result: unknown) => NewAuditEntry | undefined) | undefined;
  /** Set by the store once the entry has committed with the change. */
  recorded: boolean;
}

const calls = new AsyncLocalStorage<CallScope>();

/** `timeoutMs` from now bounds the call's store work; undefined: a local store that needs no bound. */
export function inCall<T>(timeoutMs: number | undefined, work: () => Promise<T>): Promise<T> {
  const scope: CallScope = { deadline: timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + timeoutMs, entryFor: undefined, recorded: false };
  return calls.run(scope, work);
}

export const currentCall = (): CallScope | undefined => calls.getStore();

/** Runs `work` as no admin call's: its store calls get their own timeouts. */
export const outsideCall = <T>(work: () => T): T => calls.exit(work);

/** The entry a write of the current call carries, and what to say once it committed; undefined when none is due (already recorded, or nothing changed). */
export function pendingEntry(result: unknown): { entry: NewAuditEntry; committed(): void } | undefined {
  const scope = calls.getStore();
  if (!scope?.entryFor || scope.recorded) return undefined;
  const entry = scope.entryFor(result);
  if (!entry) return undefined;
  const committed = (): void => {
    scope.recorded = true;
  };
  return { entry, committed };
}

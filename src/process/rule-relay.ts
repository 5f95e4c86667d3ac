// The primary's side of the workers' rule stores: their reads answered from
// the one real store, its changes sent on to every worker. So the embedded
// SQLite file keeps one process (one writer, no lock errors) and a change
// reaches the workers as fast as it reaches the primary's own cache.
import type { Worker } from 'node:cluster';
import type { PlanSubject } from '../rules/plans.js';
import type { OverrideStore, RuleStore, StoreChange } from '../rules/store.js';
import { SluiceError } from '../core/errors.js';
import { type FromWorker, isSluiceMessage, RULE_STORE_METHODS, type RuleStoreMethod, type ToWorker } from './messages.js';

export class RuleRelay {
  private unwatch: (() => void) | undefined;

  constructor(
    private readonly store: RuleStore,
    private readonly workers: () => Iterable<Worker>,
  ) {}

  async start(): Promise<void> {
    this.unwatch = await this.store.watch((change) => this.broadcast(change));
  }

  /** Called with every message a worker sends; answers its rule store calls. */
  handle(worker: Worker, message: unknown): void {
    if (!isSluiceMessage<FromWorker>(message) || message.sluice !== 'rules-call') return;
    const { id, method, args } = message;
    const reply = (answer: Omit<Extract<ToWorker, { sluice: 'rules-reply' }>, 'sluice' | 'id'>) => {
      if (worker.isConnected()) worker.send({ sluice: 'rules-reply', id, ...answer } satisfies ToWorker);
    };
    if (!RULE_STORE_METHODS.includes(method)) {
      reply({ error: { message: `no rule store method ${String(method)}` } });
      return;
    }
    const call = callStore(this.store, method, args);
    call.then(
      (value) => reply({ value }),
      (error: unknown) => reply({ error: { message: error instanceof Error ? error.message : String(error), ...(error instanceof SluiceError ? { code: error.code } : {}) } }),
    );
  }

  stop(): void {
    this.unwatch?.();
  }

  private broadcast(change: StoreChange): void {
    for (const worker of this.workers()) if (worker.isConnected()) worker.send({ sluice: 'rules-change', change } satisfies ToWorker);
  }
}

/** A rule store method by name; the overrides' reads live on `store.overrides`. */
function callStore(store: RuleStore, method: RuleStoreMethod, args: unknown[]): Promise<unknown> {
  if (method === 'listOverrides') return store.overrides.list(args[0] as Parameters<OverrideStore['list']>[0]);
  if (method === 'getOverride') return store.overrides.get(args[0] as string, args[1] as string);
  const plans = planCall(store, method, args);
  if (plans) return plans;
  return (store[method as Exclude<RuleStoreMethod, 'listOverrides' | 'getOverride' | PlanMethod>] as (...params: unknown[]) => Promise<unknown>).apply(store, args);
}

type PlanMethod = 'listPlans' | 'getPlan' | 'listAssignments' | 'getAssignment' | 'listListEntries' | 'getListEntry';

/** The plans' and the list entries' reads, which live on `store.plans` and `store.lists`. */
function planCall(store: RuleStore, method: RuleStoreMethod, args: unknown[]): Promise<unknown> | undefined {
  if (method === 'listPlans') return store.plans.list();
  if (method === 'getPlan') return store.plans.get(args[0] as string);
  if (method === 'listAssignments') return store.plans.listAssignments(args[0] as { plan?: string } | undefined);
  if (method === 'getAssignment') return store.plans.getAssignment(args[0] as PlanSubject, args[1] as string);
  if (method === 'listListEntries') return store.lists.list();
  if (method === 'getListEntry') return store.lists.get(args[0] as string);
  return undefined;
}

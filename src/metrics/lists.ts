// What the allow and deny lists decided, at the admin listener's /metrics.
// One label from a fixed set, so the series stay three whatever the lists
// hold: no entry, address, tenant or value ever reaches a label.
import { Counter } from 'prom-client';
import { resilienceRegistry } from './registry.js';

/** allowlisted: an allow entry matched, no limit applied; denied: a deny entry matched (403); lifted: a limit-scoped allow lifted one or more limits. */
export type ListOutcome = 'allowlisted' | 'denied' | 'lifted';

const counter = new Counter({
  name: 'sluice_list_decisions_total',
  help: 'Requests decided by the allow and deny lists, by outcome (allowlisted: no limit applied; denied: answered 403; lifted: a limit-scoped allow entry skipped some limits)',
  labelNames: ['outcome'] as const,
  registers: [resilienceRegistry],
});
const bound = { allowlisted: counter.labels('allowlisted'), denied: counter.labels('denied'), lifted: counter.labels('lifted') };

export function countListed(outcome: ListOutcome): void {
  bound[outcome].inc();
}

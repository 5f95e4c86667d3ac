// The notifications' counters at the admin listener's /metrics. Labels come
// from fixed sets: no tenant, limit or URL ever reaches a label.
import { lazyCounter } from './lazy-metrics.js';
import { resilienceRegistry } from './registry.js';

/** sent: a 2xx from the receiver; failed: no 2xx before retryForMs ran out; dropped: the queue was full, or shutdown came first; duplicate: another instance had already claimed the event in Redis. */
export type NotifyOutcome = 'sent' | 'failed' | 'dropped' | 'duplicate';

const outcomes = lazyCounter(resilienceRegistry, {
  name: 'sluice_notifications_total',
  help: 'Limit threshold events, by outcome (sent: delivered; failed: not delivered before retryForMs; dropped: queue full or shut down; duplicate: another instance sent it)',
  labelNames: ['outcome'] as const,
});
const retries = lazyCounter(resilienceRegistry, {
  name: 'sluice_notification_retries_total',
  help: 'Limit threshold event deliveries tried again after a failed attempt (an error, a timeout or a status other than 2xx)',
});

export function countNotification(outcome: NotifyOutcome): void {
  outcomes.inc({ outcome });
}

export function countRetry(): void {
  retries.inc();
}

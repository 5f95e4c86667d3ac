// The gateway's side of notifications: after each decision, a cheap check of
// the limits that have `notify:` (none: one branch, no allocation); a
// threshold reached is deduplicated locally (a tenant hovering at 90 % is one
// map hit per request, not a Redis call) and queued for the sender, which
// claims it cluster-wide and POSTs it, never on the request's path.
import type { Logger } from 'pino';
import type { Decision } from '../core/decision.js';
import type { Bucket } from '../core/ids.js';
import type { Rule } from '../policies/rule.js';
import { BoundedLru } from '../core/lru.js';
import type { NotificationsConfig, NotifyTarget } from './config.js';
import { claimKey, type EventIdentity, eventId, type ThresholdEvent } from './event.js';
import type { NotificationRecord } from './recent.js';
import { type Claim, type Post, WebhookSender } from './sender.js';
import { reachedIndex, windowOf } from './window.js';

/** What the notifier reads of a request's limit (request-limits/types.ts RequestLimit has it). */
export interface NotifiedLimit {
  readonly limitId: string;
  /** The bucket: `rl:{tag}:name`. */
  readonly bucket: Bucket;
  readonly rule: Rule;
}

/** Events remembered as sent (or queued) by this instance: a bounded map, so random tenants cannot grow it. */
const LOCAL_DEDUP_SIZE = 10_000;
/** A claim outlives its window by this much: an instance whose clock lags may still decide in it. */
const CLAIM_MARGIN_MS = 60_000;

export interface NotifierOptions {
  readonly logger: Logger;
  /** The cluster-wide claims (redis-claim.ts), closed with the notifier; absent: this instance's memory only (the memory store's single instance). */
  readonly claims?: { readonly claim: Claim; close(): Promise<void> } | undefined;
  readonly post?: Post;
  readonly now?: () => number;
}

export interface NotificationsView {
  readonly pending: number;
  readonly recent: NotificationRecord[];
}

export class Notifier {
  private targets = new Map<string, NotifyTarget>();
  private readonly seen = new BoundedLru<string, number>(LOCAL_DEDUP_SIZE);
  private readonly sender: WebhookSender;
  private readonly now: () => number;
  private readonly claims: NotifierOptions['claims'];

  constructor(config: NotificationsConfig, options: NotifierOptions) {
    this.now = options.now ?? Date.now;
    this.claims = options.claims;
    this.sender = new WebhookSender({ ...config, logger: options.logger, claim: options.claims?.claim, now: this.now, ...(options.post ? { post: options.post } : {}) });
    this.reconfigure(config);
  }

  /** A reloaded config's limits and receivers; the queue's size, workers and drain stay as started. */
  reconfigure(config: NotificationsConfig): void {
    this.targets = new Map(Object.entries(config.limits));
  }

  /** After a decision: each limit with notify whose decision reached a threshold. */
  observe(tenant: string | undefined, route: string, limits: readonly NotifiedLimit[], decisions: readonly Decision[]): void {
    if (this.targets.size === 0) return;
    for (let i = 0; i < limits.length; i++) {
      const limit = limits[i]!;
      const target = this.targets.get(limit.limitId);
      const decision = decisions[i];
      // A store-down decision (open, closed) says nothing of the bucket.
      if (target === undefined || decision === undefined || decision.source === 'open' || decision.source === 'closed') continue;
      const reached = reachedIndex(target.at, decision);
      if (reached >= 0) this.reached({ tenant, route }, limit, decision, target, reached);
    }
  }

  view(): NotificationsView {
    return { pending: this.sender.pending, recent: this.sender.recent.list() };
  }

  /** Stops accepting, sends what it can within drainMs (sender.ts), then closes the Redis connection. */
  async close(): Promise<void> {
    await this.sender.close();
    await this.claims?.close();
  }

  private reached(request: { tenant: string | undefined; route: string }, limit: NotifiedLimit, decision: Decision, target: NotifyTarget, reached: number): void {
    const { tenant, route } = request;
    const now = this.now();
    const window = windowOf(limit.rule, decision, now);
    for (let k = 0; k <= reached; k++) {
      const threshold = target.at[k]!;
      const { tag, name } = limit.bucket;
      const identity: EventIdentity = { tag, name, windowStart: window.start, threshold };
      const local = `${tag}\u0000${name}\u0000${window.start}\u0000${threshold}`;
      if ((this.seen.peek(local) ?? 0) > now) continue;
      this.seen.set(local, now + window.ttlMs);
      const event: ThresholdEvent = {
        id: eventId(identity),
        type: 'limit.threshold',
        tenant: tenant ?? null,
        limit: limit.limitId,
        route,
        threshold,
        limitValue: decision.limit,
        remaining: decision.remaining,
        windowResetAt: new Date(window.resetAt).toISOString(),
        at: new Date(now).toISOString(),
      };
      this.sender.enqueue({ event, target, claim: { key: claimKey(identity), ttlMs: window.ttlMs + CLAIM_MARGIN_MS } });
    }
  }
}

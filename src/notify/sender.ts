// Sends threshold events off the request path: a bounded queue (past it an
// event is dropped and counted), a few POSTs in flight, each with a timeout,
// and retries with exponential backoff and jitter until the limit's
// retryForMs runs out. Before its first POST an event is claimed (Redis SET
// NX, shared-dedup.ts), so one instance of the cluster sends it. Nothing here
// is awaited by a request: a slow or dead receiver only fills the queue.
import type { Logger } from 'pino';
import type { NotifyTarget } from './config.js';
import type { ThresholdEvent } from './event.js';
import { countNotification, countRetry } from '../metrics/notifications.js';
import { type NotificationRecord, RecentNotifications } from './recent.js';
import { SIGNATURE_HEADER, signatureHeader } from './signature.js';

/** One POST: resolves with the status, rejects on a network error or the timeout. */
export type Post = (url: string, init: { headers: Record<string, string>; body: string; signal: AbortSignal }) => Promise<number>;

/** The cluster-wide claim: true if this instance is the first to claim `key` (for `ttlMs`). */
export type Claim = (key: string, ttlMs: number) => Promise<boolean>;

export interface Job {
  readonly event: ThresholdEvent;
  readonly target: NotifyTarget;
  readonly claim: { readonly key: string; readonly ttlMs: number };
}

interface Pending extends Job {
  attempts: number;
  /** No new attempt after this (epoch ms). */
  giveUpAt: number;
  claimed: boolean;
}

export interface SenderOptions {
  readonly maxQueued: number;
  readonly concurrency: number;
  readonly drainMs: number;
  readonly logger: Logger;
  readonly claim?: Claim | undefined;
  readonly post?: Post;
  readonly now?: () => number;
  readonly random?: () => number;
}

const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 300_000;

/** fetch: no redirect followed (a webhook that moved is a failure to see), the body read and dropped so the socket is reused. */
export const fetchPost: Post = async (url, { headers, body, signal }) => {
  const response = await fetch(url, { method: 'POST', headers, body, signal, redirect: 'manual' });
  await response.arrayBuffer().catch(() => undefined);
  return response.status;
};

export class WebhookSender {
  readonly recent = new RecentNotifications();
  private queue: Pending[] = [];
  private head = 0;
  private inFlight = 0;
  private readonly waiting = new Map<Pending, NodeJS.Timeout>();
  private readonly aborts = new Set<AbortController>();
  private accepting = true;
  private idle: (() => void) | undefined;
  private readonly post: Post;
  private readonly now: () => number;
  private readonly random: () => number;

  constructor(private readonly options: SenderOptions) {
    this.post = options.post ?? fetchPost;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
  }

  /** Events queued, in flight or waiting for a retry. */
  get pending(): number {
    return this.queue.length - this.head + this.inFlight + this.waiting.size;
  }

  /** Queues the event; false (dropped and counted) when the queue is full or the sender is stopping. */
  enqueue(job: Job): boolean {
    if (!this.accepting || this.pending >= this.options.maxQueued) {
      this.settle({ ...job, attempts: 0, giveUpAt: 0, claimed: false }, 'dropped', this.accepting ? 'queue full' : 'shutdown');
      return false;
    }
    this.queue.push({ ...job, attempts: 0, giveUpAt: this.now() + job.target.retryForMs, claimed: false });
    this.pump();
    return true;
  }

  /** Stops accepting; what is queued (retries included, now) may still go for drainMs; the rest is dropped and counted. */
  async close(): Promise<void> {
    if (!this.accepting) return;
    this.accepting = false;
    for (const [job, timer] of this.waiting) {
      clearTimeout(timer);
      this.queue.push(job);
    }
    this.waiting.clear();
    this.pump();
    if (this.pending > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.options.drainMs);
        this.idle = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    for (const abort of this.aborts) abort.abort();
    for (let i = this.head; i < this.queue.length; i++) this.settle(this.queue[i]!, 'dropped', 'shutdown');
    this.queue = [];
    this.head = 0;
  }

  private pump(): void {
    while (this.inFlight < this.options.concurrency && this.head < this.queue.length) {
      const job = this.queue[this.head]!;
      this.queue[this.head++] = undefined as unknown as Pending;
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      this.inFlight++;
      void this.attempt(job).finally(() => {
        this.inFlight--;
        this.pump();
        if (this.pending === 0) this.idle?.();
      });
    }
  }

  private async attempt(job: Pending): Promise<void> {
    if (!job.claimed) {
      if (!(await this.claimed(job))) {
        countNotification('duplicate');
        return;
      }
      job.claimed = true;
    }
    job.attempts++;
    const detail = await this.send(job);
    if (detail === undefined) this.settle(job, 'sent', '2xx');
    else this.retryOrFail(job, detail);
  }

  /** Claimed in Redis; an unreachable Redis sends anyway (at least once: the receiver sees the same id twice at worst). */
  private async claimed(job: Pending): Promise<boolean> {
    if (this.options.claim === undefined) return true;
    try {
      return await this.options.claim(job.claim.key, job.claim.ttlMs);
    } catch (error) {
      this.options.logger.debug({ err: error, limit: job.event.limit }, 'notification claim failed; sending unclaimed');
      return true;
    }
  }

  /** undefined when the receiver answered 2xx, else why not. */
  private async send(job: Pending): Promise<string | undefined> {
    const body = JSON.stringify(job.event);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'sluice-notify',
      [SIGNATURE_HEADER.toLowerCase()]: signatureHeader(job.target.secret.reveal(), Math.floor(this.now() / 1000), body),
    };
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), job.target.timeoutMs);
    this.aborts.add(abort);
    try {
      const status = await this.post(job.target.url, { headers, body, signal: abort.signal });
      return status >= 200 && status < 300 ? undefined : `HTTP ${status}`;
    } catch (error) {
      if (abort.signal.aborted) return 'timeout';
      const cause = (error as { cause?: { code?: string } }).cause;
      return cause?.code ?? (error as { code?: string }).code ?? 'network error';
    } finally {
      clearTimeout(timer);
      this.aborts.delete(abort);
    }
  }

  private retryOrFail(job: Pending, detail: string): void {
    const backoff = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (job.attempts - 1));
    const delay = Math.round(backoff * (0.5 + this.random() / 2)); // jitter: receivers back up together, retries should not
    if (!this.accepting || this.now() + delay > job.giveUpAt) {
      this.settle(job, 'failed', detail);
      return;
    }
    countRetry();
    const timer = setTimeout(() => {
      this.waiting.delete(job);
      this.queue.push(job);
      this.pump();
    }, delay);
    timer.unref();
    this.waiting.set(job, timer);
  }

  private settle(job: Pending, outcome: NotificationRecord['outcome'], detail: string): void {
    countNotification(outcome);
    const { event } = job;
    this.recent.add({ id: event.id, at: this.now(), outcome, tenant: event.tenant, limit: event.limit, route: event.route, threshold: event.threshold, attempts: job.attempts, detail });
    if (outcome === 'failed') this.options.logger.warn({ limit: event.limit, tenant: event.tenant, attempts: job.attempts, detail }, 'limit notification not delivered');
  }
}

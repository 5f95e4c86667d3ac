// The breaker and the deadline around every call to the shared store: the
// last part of the decision chain before the store. A call rejects with the
// breaker's EOPENBREAKER or a DeadlineError; the fallback above turns that
// into a decision.
//
// InFlight, below: units per bucket sent to the store and not answered yet. They count until
// the store answers, even after the deadline gave up on the call: the
// fallback must not hand them out a second time.
//
// The calls on one bucket travel on one connection and Redis runs them in the
// order sent, so a late call's decision in Redis follows exactly the units
// sent before it: `take` returns the call's place (the units sent before it),
// and `aheadOf` the units of those still unanswered. The calls sent after it
// run after it in Redis too, and do not weigh on its local decision.
import type { Decision } from '../../core/decision.js';
import type { Clock } from '../../stores/clock.js';
import type { GroupReply, LeaseReply, SharedStore, StoreCall } from '../../stores/store.js';
import type { Plan } from '../engine/plan.js';
import type { ChainStats } from '../metrics/stats.js';
import { consumeGroup } from '../steps/compose.js';
import type { RedisBreaker } from './breaker.js';
import { type Bound, type CallClock, CallDeadlines, type Deadline, DeadlineTimer } from './deadline.js';

/** Where the guard leaves the call it sent, for reconciling a reply that comes after the deadline. */
export interface Sent<T> {
  call?: Promise<T>;
  /** When the call was sent (the guard's clock). */
  at?: number;
  /** Per bucket charged (in the order of the call's charges): its place among the units in flight (InFlight.take). */
  places?: (number | undefined)[];
}

/** Units a call may take from a bucket (its base key). */
type Charge = readonly [baseKey: string, units: number];

export interface StoreGuardOptions {
  store: SharedStore;
  breaker: RedisBreaker;
  /** What a request waits for the store at most: fixed, or adaptive (fed by the answers). */
  deadline: Deadline;
  stats: ChainStats;
  now: Clock;
}

export class StoreGuard {
  /** Units sent per bucket (base key) and not answered yet. */
  readonly inFlight = new InFlight();
  /** When each connection (channel) last answered one of this guard's calls: where the next answer's silence starts. */
  private readonly answeredAt = new Map<string, number>();
  /** The clock and the one timer that judge all of this guard's calls, kept armed between them (deadline.ts): no timer made per call. */
  private readonly clock: CallClock;
  /** The breaker's silence callback, made once rather than per call. */
  private readonly silenceFailed = (error: unknown) => this.options.breaker.failed(error);

  constructor(private readonly options: StoreGuardOptions) {
    this.clock = { now: options.now, timer: new DeadlineTimer(options.now, undefined, true) };
  }

  consume(plan: Plan, cost: number, sent?: Sent<Decision>): Promise<Decision> {
    const { store } = this.options;
    const { penalty } = plan;
    const call = penalty === undefined ? () => store.consume(plan.bucket, plan.rule, cost) : () => store.consumePenalized(plan.bucket, plan.rule, cost, penalty);
    return this.run(plan, cost, call, sent);
  }

  /** Several limits of one hash slot (`calls`, planned as `plans`) in one store call. */
  consumeAll(plans: readonly Plan[], calls: readonly StoreCall[], sent?: Sent<GroupReply>): Promise<GroupReply> {
    const charges = plans.map((plan, i): Charge => [plan.baseKey, calls[i]!.cost]);
    return this.runOn(plans[0]!.bucket.key, charges, () => consumeGroup(this.options.store, calls), sent);
  }

  peek(plan: Plan): Promise<Decision> {
    return this.run(plan, 0, () => this.options.store.peek(plan.bucket, plan.rule));
  }

  lease(plan: Plan, need: number, want: number): Promise<LeaseReply> {
    return this.run(plan, want, () => this.options.store.lease(plan.bucket, plan.rule, need, want));
  }

  /** Closed: calls go to the store. Open or half-open: the store is treated as down. */
  get closed(): boolean {
    return this.options.breaker.closed;
  }

  /** Open: calls fail at once (half-open lets a probe through). */
  get opened(): boolean {
    return this.options.breaker.opened;
  }

  /**
   * A call that may take `units` from the plan's bucket, under the breaker and
   * the deadline. Its units count as in flight until the store answers.
   */
  private run<T>(plan: Plan, units: number, call: () => Promise<T>, sent?: Sent<T>): Promise<T> {
    return this.runOn(plan.bucket.key, [[plan.baseKey, units]], call, sent);
  }

  /** The same for a call on the slot of `key` that may take units from each bucket of `charges`. */
  private runOn<T>(key: string, charges: readonly Charge[], call: () => Promise<T>, sent?: Sent<T>): Promise<T> {
    const { breaker, store, stats, now } = this.options;
    const started = now();
    const deadlineMs = this.options.deadline.msAt(started);
    const connection = store.connection;
    const deadlines = new CallDeadlines(connection, connection.channelOf(key), deadlineMs, this.clock, started);
    if (breaker.closed) return this.runClosed(deadlines, deadlineMs, charges, call, sent);
    // Open or half-open: through opossum, which refuses at once or lets the one probe through.
    // A half-open probe's units are not pending for others: if it misses its deadline, its reply is reconciled.
    const silenceMs = this.failureSilenceMs(deadlineMs);
    const fired = breaker.fire(() => {
      stats.storeCalls++;
      const running = call();
      if (sent) sent.call = running;
      if (!sent) for (const [baseKey, units] of charges) if (units > 0) this.inFlight.add(baseKey, units, running);
      return deadlines.bound(running, silenceMs);
    });
    // What the request waits for: the shorter deadline.
    return deadlines.bound(fired, deadlineMs);
  }

  /**
   * The closed breaker's path, the hot one: the call and its outcome are
   * counted by the breaker without a promise of opossum's, and the breaker's
   * deadline is a callback, not a second promise: one promise per call.
   */
  private runClosed<T>(deadlines: CallDeadlines, deadlineMs: number, charges: readonly Charge[], call: () => Promise<T>, sent?: Sent<T>): Promise<T> {
    const { breaker, stats } = this.options;
    const silence = deadlines.watch(this.failureSilenceMs(deadlineMs), this.silenceFailed);
    breaker.noteCall();
    stats.storeCalls++;
    let running: Promise<T>;
    try {
      running = call();
    } catch (error) {
      if (deadlines.settle(silence)) breaker.failed(error);
      return Promise.reject(error);
    }
    if (sent) {
      sent.call = running;
      sent.at = deadlines.started;
      sent.places = charges.map(([baseKey, units]) => (units > 0 ? this.inFlight.take(baseKey, units) : undefined));
    } else for (const [baseKey, units] of charges) if (units > 0) this.inFlight.take(baseKey, units);
    // The guard's bookkeeping and the request's deadline share one reaction to the call (not a `then` each).
    const { promise, resolve, reject } = withResolvers<T>();
    const request = deadlines.watch(deadlineMs, reject);
    running.then(
      (value) => {
        this.settled(deadlines, silence, charges, undefined);
        if (deadlines.settle(request)) resolve(value);
      },
      (error: unknown) => {
        this.settled(deadlines, silence, charges, error ?? new Error('the store call failed'));
        if (deadlines.settle(request)) reject(error);
      },
    );
    return promise;
  }

  /**
   * A closed-path call answered: its units are no longer in flight, and the
   * breaker hears of it unless its silence did first. An answer in time for
   * the breaker is the adaptive deadline's sample, late for the request or not.
   */
  private settled(deadlines: CallDeadlines, silence: Bound, charges: readonly Charge[], error: unknown): void {
    for (const [baseKey, units] of charges) if (units > 0) this.inFlight.release(baseKey, units);
    if (!deadlines.settle(silence)) return;
    if (error !== undefined) {
      this.options.breaker.failed(error);
      return;
    }
    this.options.breaker.succeeded();
    const at = this.options.now();
    const last = this.answeredAt.get(deadlines.channel) ?? Number.NEGATIVE_INFINITY;
    this.answeredAt.set(deadlines.channel, at);
    // Sent before the client was ready (a fresh client, a reconnect): it waited for the handshake, not for Redis.
    if (deadlines.started < (this.options.store.connection.readyAt?.() ?? Number.NEGATIVE_INFINITY)) return;
    // The silence as the deadline judges it: from the start, the previous answer, or a late timer (this process was busy);
    // never more than the event loop waited meanwhile (a reply read after a stall of this process sat in the socket).
    const silentMs = at - Math.max(deadlines.judgedFrom, last);
    if (this.options.deadline.learnsFrom(silentMs)) this.options.deadline.answered(Math.min(silentMs, deadlines.idleSinceStart()), at);
  }

  /**
   * How long a call may stay unanswered before the breaker counts a failure. A
   * slow but alive store (a busy machine) is not a down one: with the breaker
   * closed and the connection not lost, `silenceMs`, and the late reply is
   * reconciled. A lost connection (Redis killed) or a half-open probe fails at
   * the deadline, so the breaker opens, or stays open, as fast as before.
   */
  private failureSilenceMs(deadlineMs: number): number {
    const { store, breaker } = this.options;
    return !store.connection.lost() && breaker.closed ? Math.max(deadlineMs, breaker.options.silenceMs) : deadlineMs;
  }
}

/** A promise and what settles it, as Promise.withResolvers (Node 22) gives them. */
interface Resolvers<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

// One executor for every call, handing its functions over through these two:
// no executor closure made per call on the hot path.
let resolveHandedOver: (value: never) => void = () => undefined;
let rejectHandedOver: (error: unknown) => void = () => undefined;
const handOver = (resolve: (value: never) => void, reject: (error: unknown) => void): void => {
  resolveHandedOver = resolve;
  rejectHandedOver = reject;
};

function withResolvers<T>(): Resolvers<T> {
  const promise = new Promise<T>(handOver as (resolve: (value: T) => void, reject: (error: unknown) => void) => void);
  return { promise, resolve: resolveHandedOver as (value: T) => void, reject: rejectHandedOver };
}

interface Flow {
  /** Units sent since the bucket last had nothing in flight. */
  sent: number;
  /** Of those, units answered (or failed). */
  answered: number;
}

/** Idle flows kept for reuse before a sweep forgets them: a bucket's next call reuses its flow instead of a Map insert and delete per call. */
export const IDLE_KEPT = 1024;

export class InFlight {
  /** Keys with calls outstanding, and up to about IDLE_KEPT idle ones (sent = answered = 0). */
  private readonly flows = new Map<string, Flow>();
  /** Flows with units outstanding. */
  private busy = 0;

  /** Counts `units` of `key` as pending until `call` settles. */
  add(key: string, units: number, call: Promise<unknown>): void {
    this.take(key, units);
    const settle = () => this.release(key, units);
    call.then(settle, settle);
  }

  /** Counts `units` of `key` as pending until release() (the caller watches the call); returns the call's place for aheadOf. */
  take(key: string, units: number): number {
    let flow = this.flows.get(key);
    if (flow === undefined) {
      if (this.flows.size - this.busy >= IDLE_KEPT) this.sweep();
      flow = { sent: 0, answered: 0 };
      this.flows.set(key, flow);
    }
    if (flow.sent === 0) this.busy++;
    const place = flow.sent;
    flow.sent += units;
    return place;
  }

  release(key: string, units: number): void {
    const flow = this.flows.get(key);
    if (flow === undefined || flow.sent === 0) return;
    flow.answered += units;
    if (flow.answered < flow.sent) return;
    flow.sent = 0;
    flow.answered = 0;
    this.busy--;
  }

  /** Buckets with units in flight (none once every call is answered). */
  get size(): number {
    return this.busy;
  }

  /** Buckets kept, in flight or idle: never more than those in flight and IDLE_KEPT. */
  get kept(): number {
    return this.flows.size;
  }

  pending(key: string): number {
    const flow = this.flows.get(key);
    return flow === undefined ? 0 : flow.sent - flow.answered;
  }

  /** The units sent before the call at `place` (from take, the call still unanswered) and not answered yet. */
  aheadOf(key: string, place: number): number {
    const flow = this.flows.get(key);
    return flow === undefined ? 0 : Math.max(0, place - flow.answered);
  }

  /** Forgets the idle flows: memory stays bounded by the buckets in flight. */
  private sweep(): void {
    for (const [key, flow] of this.flows) if (flow.sent === 0) this.flows.delete(key);
  }
}

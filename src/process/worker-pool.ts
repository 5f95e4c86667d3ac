// The primary's gateway workers: forked, each given the config, replaced when
// one dies (counted), reconfigured on reload, replaced one at a time on
// request (a new worker serves before the old one drains), drained on stop.
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import type { SluiceConfig } from '../config/types.js';
import { type FromWorker, isSluiceMessage, type StoreIdentity, type ToWorker } from './messages.js';
import { liveWorkers, workerRestarts } from '../admin/process-metrics.js';

/** A worker that dies this soon after its start is crashing: wait before the next one. */
const CRASH_WINDOW_MS = 5_000;
const RESTART_DELAY_MS = 1_000;
/** How long stop() waits for the workers to drain before it kills what is left. */
const STOP_TIMEOUT_MS = 20_000;
/** How long a reload waits for every worker to confirm it. */
const CONFIGURE_TIMEOUT_MS = 10_000;

export interface WorkerPoolOptions {
  count: number;
  config: SluiceConfig;
  store: StoreIdentity;
  logger: Logger;
  /** Every message a worker sends (the rule relay's calls among them). */
  onMessage: (worker: Worker, message: unknown) => void;
}

export class WorkerPool {
  private config: SluiceConfig;
  private seq = 0;
  /** True from stop(): the instance drains (/readyz 503). */
  stopping = false;
  private readonly serving = new Set<Worker>();
  private readonly retiring = new Set<Worker>();
  private readonly started = new Map<Worker, number>();
  /** The config seq each worker was given at its start. */
  private readonly given = new Map<Worker, number>();
  private readonly waiters = new Map<Worker, Set<(message: FromWorker) => void>>();

  constructor(private readonly options: WorkerPoolOptions) {
    this.config = options.config;
    cluster.on('message', (worker, message: unknown) => this.receive(worker, message));
    cluster.on('exit', (worker, code, signal) => this.exited(worker, code, signal));
  }

  /** The workers serving the gateway listener now. */
  get workers(): Worker[] {
    return [...this.serving];
  }

  async start(): Promise<void> {
    await Promise.all(Array.from({ length: this.options.count }, () => this.spawn()));
  }

  /** Every serving worker puts `config` to use; resolves when all confirmed, rejects with the first failure. */
  async reconfigure(config: SluiceConfig): Promise<void> {
    this.config = config;
    const seq = ++this.seq;
    const confirmations = this.workers.map((worker) => this.ask(worker, { sluice: 'config', config, seq }, (reply) => reply.sluice === 'configured' && reply.seq === seq));
    const replies = await Promise.all(confirmations);
    const failed = replies.find((reply) => reply?.sluice === 'configured' && reply.error);
    if (failed?.sluice === 'configured') throw new Error(`a worker could not apply the config: ${failed.error}`);
  }

  /** Replaces every worker, one at a time: the new one serves before the old one drains. */
  async roll(): Promise<void> {
    for (const old of this.workers) {
      if (this.stopping) return;
      await this.spawn();
      await this.retire(old);
    }
  }

  /** Drains every worker (each answers its in-flight requests with Connection: close) and waits for their exits. */
  async stop(): Promise<void> {
    this.stopping = true;
    const workers = [...this.started.keys()];
    // Past the drain's grace period (10 s) and a margin, what is left is stuck: killed, not waited for forever.
    const stuck = setTimeout(() => {
      for (const worker of workers) if (!worker.isDead()) worker.process.kill('SIGKILL');
    }, STOP_TIMEOUT_MS);
    await Promise.all(workers.map((worker) => this.retire(worker)));
    clearTimeout(stuck);
  }

  private spawn(): Promise<Worker> {
    const worker = cluster.fork();
    this.started.set(worker, Date.now());
    return this.ask(worker, undefined, (reply) => reply.sluice === 'ready').then(async (reply) => {
      if (!reply) throw new Error(`worker ${worker.process.pid} exited before it served`);
      // A reload while it started: it serves with the newest config before it counts as serving.
      const seq = this.seq;
      if ((this.given.get(worker) ?? seq) < seq) await this.ask(worker, { sluice: 'config', config: this.config, seq }, (answer) => answer.sluice === 'configured' && answer.seq === seq);
      this.serving.add(worker);
      liveWorkers.set(this.serving.size);
      return worker;
    });
  }

  private retire(worker: Worker): Promise<void> {
    this.serving.delete(worker);
    liveWorkers.set(this.serving.size);
    if (!this.started.has(worker)) return Promise.resolve();
    this.retiring.add(worker);
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    if (worker.isConnected()) worker.send({ sluice: 'drain' } satisfies ToWorker);
    return exited;
  }

  /** Sends `message` (if any) and resolves with the worker's first reply `matches` accepts, or undefined if it exits first or is late. */
  private ask(worker: Worker, message: ToWorker | undefined, matches: (reply: FromWorker) => boolean): Promise<FromWorker | undefined> {
    return new Promise((resolve) => {
      const timer = message ? setTimeout(() => done(undefined), CONFIGURE_TIMEOUT_MS) : undefined;
      const listeners = this.waiters.get(worker) ?? new Set();
      this.waiters.set(worker, listeners);
      const listener = (reply: FromWorker) => matches(reply) && done(reply);
      const done = (reply: FromWorker | undefined) => {
        clearTimeout(timer);
        worker.off('exit', onExit);
        listeners.delete(listener);
        resolve(reply);
      };
      const onExit = () => done(undefined);
      worker.once('exit', onExit);
      listeners.add(listener);
      if (message && worker.isConnected()) worker.send(message);
    });
  }

  private receive(worker: Worker, message: unknown): void {
    if (isSluiceMessage<FromWorker>(message) && message.sluice === 'hello') {
      this.given.set(worker, this.seq);
      // One that starts while the instance stops is told so at once: a drain sent earlier found no listener.
      if (this.stopping) worker.send({ sluice: 'drain' } satisfies ToWorker);
      else worker.send({ sluice: 'config', config: this.config, seq: this.seq, store: this.options.store } satisfies ToWorker);
    }
    if (isSluiceMessage<FromWorker>(message)) for (const listener of this.waiters.get(worker) ?? []) listener(message);
    this.options.onMessage(worker, message);
  }

  private exited(worker: Worker, code: number | null, signal: string | null): void {
    const startedAt = this.started.get(worker) ?? 0;
    this.started.delete(worker);
    this.given.delete(worker);
    this.waiters.delete(worker);
    this.serving.delete(worker);
    liveWorkers.set(this.serving.size);
    if (this.retiring.delete(worker) || this.stopping) return;
    workerRestarts.inc();
    // `pid` is the primary's own (pino's base): the worker's goes under a name of its own, never a second `pid` key.
    this.options.logger.error({ workerPid: worker.process.pid, code, signal }, 'gateway worker exited unasked: starting a new one');
    const delay = Date.now() - startedAt < CRASH_WINDOW_MS ? RESTART_DELAY_MS : 0;
    setTimeout(() => {
      if (!this.stopping) this.spawn().catch((error: unknown) => this.options.logger.error({ err: error }, 'replacement worker failed to start'));
    }, delay).unref();
  }
}

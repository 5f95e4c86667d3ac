// One "gateway process" of the accuracy bench: it runs the engines of the
// instances it is given (createEngine over its own Redis connection each),
// sends their share of the load at the scheduled times, and reports how many
// were allowed. Started with a clock skew, it shifts Date.now and
// performance.now by that many ms before anything else reads them.
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { createEngine } from '../../src/engine-factory/create-engine.js';
import type { Engine } from '../../src/limiter/engine/engine.js';
import { ACCURACY_DEADLINE_MS, type InstanceCounts, sendTimes, type WorkerJob } from './accuracy-plan.js';

const skewMs = Number(process.argv[2] ?? 0);
const realDateNow = Date.now.bind(Date);
const realPerfNow = performance.now.bind(performance);
if (skewMs !== 0) {
  Date.now = () => realDateNow() + skewMs;
  Object.defineProperty(performance, 'now', { value: () => realPerfNow() + skewMs, configurable: true });
}

/** Real epoch ms, µs precision, never skewed: the main process merges the times of every worker. */
const realEpochMs = (): number => Math.round((performance.timeOrigin + realPerfNow()) * 1000) / 1000;

process.on('message', (message: { job: WorkerJob; allOnOne: Record<string, boolean> }) => {
  void run(message.job, message.allOnOne).then(
    (counts) => process.send?.({ counts }),
    (error: unknown) => process.send?.({ error: error instanceof Error ? error.message : String(error) }),
  );
});
process.on('disconnect', () => process.exit(0));
process.send?.({ ready: true });

async function run(job: WorkerJob, allOnOne: Record<string, boolean>): Promise<InstanceCounts[]> {
  const logger = pino({ level: 'silent' });
  const engines: Engine[] = job.instances.map((instance) =>
    createEngine({ redis: 'url' in job.redis ? { url: job.redis.url } : { cluster: job.redis.cluster }, instances: instance.instances, deadlineMs: ACCURACY_DEADLINE_MS, logger }),
  );
  const counts: InstanceCounts[] = job.instances.map((i) => ({ variant: i.variant, sent: 0, sentAt: i.tenants.map(() => []), decidedAt: i.tenants.map(() => []), allowed: 0, bySource: {} }));
  // One merged, time-ordered list of sends: [time, instance, tenant].
  const sends: [number, number, number][] = [];
  job.instances.forEach((instance, i) => {
    const times = sendTimes(instance, instance.ratePerTenant, job.durationMs, allOnOne[instance.variant] ?? false);
    for (let t = 0; t < instance.tenants.length; t++) {
      // Tenants of a variant are phase-shifted so 1,000 of them do not all fire in the same millisecond.
      const phase = (t / instance.tenants.length) * (1000 / instance.ratePerTenant);
      for (const at of times) sends.push([at + phase, i, t]);
    }
  });
  sends.sort((a, b) => a[0] - b[0]);
  // Warm each engine's connection so the first requests are not the connection handshake.
  await Promise.all(engines.map((engine) => engine.peek({ tag: 'warm-up', name: 'warm-up' }, job.instances[0]!.rule).catch(() => undefined)));

  const pending: Promise<void>[] = [];
  const wait = job.startAt - realDateNow();
  if (wait > 0) await sleep(wait);
  const origin = realPerfNow();
  let next = 0;
  while (next < sends.length) {
    const elapsed = realPerfNow() - origin;
    while (next < sends.length && sends[next]![0] <= elapsed) {
      const [, i, tenant] = sends[next++]!;
      const instance = job.instances[i]!;
      const count = counts[i]!;
      count.sent++;
      count.sentAt[tenant]!.push(realEpochMs());
      pending.push(
        engines[i]!.decide({ tag: instance.tenants[tenant]!, name: instance.route }, instance.rule).then((decision) => {
          count.decidedAt[tenant]!.push(realEpochMs());
          if (decision.allowed) count.allowed++;
          count.bySource[decision.source] = (count.bySource[decision.source] ?? 0) + 1;
        }),
      );
    }
    await sleep(1);
  }
  await Promise.all(pending);
  await Promise.all(engines.map((engine) => engine.close()));
  return counts;
}

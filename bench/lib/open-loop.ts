// Open-loop offering in-process: `rate` calls per second, fired by a 1 ms timer
// loop (all calls due since the last wake-up go out together), each timed from
// its scheduled instant.
import { setTimeout as sleep } from 'node:timers/promises';

export async function offer(rate: number, durationMs: number, call: (seq: number, scheduledMs: number) => Promise<void>): Promise<number> {
  const interval = 1000 / rate;
  const pending: Promise<void>[] = [];
  const start = performance.now();
  let sent = 0;
  while (performance.now() - start < durationMs) {
    const elapsed = performance.now() - start;
    while (sent * interval <= elapsed && sent * interval < durationMs) {
      pending.push(call(sent, start + sent * interval));
      sent++;
    }
    await sleep(1);
  }
  await Promise.all(pending);
  return sent;
}

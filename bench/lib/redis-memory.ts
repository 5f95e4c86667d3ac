// Bytes of Redis memory per bucket: INFO used_memory before and after writing
// `count` buckets (one decision each), divided by the buckets, and Redis's own
// MEMORY USAGE estimate on a sample of keys, scaled to buckets (Sluice keeps a
// tenant's buckets as fields of one hash, so a key may hold several).
import type { Redis } from 'ioredis';
import { round } from './latency.js';
import { usedMemory } from './redis-info.js';

export interface MemoryResult {
  buckets: number;
  keysStored: number;
  /** (used_memory after − before) / buckets: includes the keys' dictionary entries and expiry. */
  bytesPerBucket: number;
  /** Mean MEMORY USAGE of up to 200 sampled keys × keys stored / buckets (a key may hold several buckets). */
  memoryUsageSample: number;
}

export async function bytesPerBucket(admin: Redis, count: number, write: (i: number) => Promise<unknown>): Promise<MemoryResult> {
  await admin.flushall();
  const before = await usedMemory(admin);
  const inFlight = 256;
  for (let start = 0; start < count; start += inFlight) {
    const batch: Promise<unknown>[] = [];
    for (let i = start; i < Math.min(count, start + inFlight); i++) batch.push(write(i));
    await Promise.all(batch);
  }
  const after = await usedMemory(admin);
  const keysStored = await admin.dbsize();
  const [, sample] = await admin.scan('0', 'COUNT', 200);
  let sampled = 0;
  for (const key of sample.slice(0, 200)) sampled += Number(await admin.memory('USAGE', key)) || 0;
  await admin.flushall();
  return {
    buckets: count,
    keysStored,
    bytesPerBucket: round((after - before) / count, 1),
    memoryUsageSample: sample.length ? round((sampled / Math.min(200, sample.length)) * (keysStored / count), 1) : Number.NaN,
  };
}

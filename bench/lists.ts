// npm run bench:lists [-- --quick]
// What one allow/deny list lookup costs as the lists grow: ListSet.check for
// one client address against 10 and 100,000 network entries, hits and misses
// alike. The prefix table asks one hash table per prefix length in use, so the
// cost follows the lengths in use, not the entry count: the first two rows use
// the same lengths (IPv4 /16 /24 /32, IPv6 /32 /48 /64 /128), the last every
// length of both families (the worst case). CPU ns per lookup, medians of the
// repeats, rows in turns.
import { parseIp } from '../src/core/ip-address.js';
import { ListSet } from '../src/lists/list-set.js';
import type { ListEntry, ListQuery } from '../src/lists/types.js';
import { isMain, runMain } from './lib/cleanup.js';
import { median, round } from './lib/latency.js';
import { type BenchOptions, parseOptions, pick } from './lib/options.js';
import { textTable } from './lib/table.js';

/** A small deterministic generator: the same lists on every run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state;
  };
}

const COMMON = { v4: [16, 24, 32], v6: [32, 48, 64, 128] };
const EVERY = { v4: Array.from({ length: 33 }, (_, i) => i), v6: Array.from({ length: 129 }, (_, i) => i) };

function entries(count: number, next: () => number, lengths: typeof COMMON): ListEntry[] {
  const out: ListEntry[] = [];
  for (let i = 0; i < count; i++) {
    const v4 = i % 4 !== 3;
    const word = next();
    const cidr = v4
      ? `${word >>> 24}.${(word >>> 16) & 255}.${(word >>> 8) & 255}.${word & 255}/${lengths.v4[i % lengths.v4.length]}`
      : `2001:db8:${(word >>> 16).toString(16)}:${(word & 0xffff).toString(16)}::${(next() & 0xffff).toString(16)}/${lengths.v6[i % lengths.v6.length]}`;
    out.push({ id: `e${i}`, action: i % 2 === 0 ? 'deny' : 'allow', match: { kind: 'cidr', cidr } });
  }
  return out;
}

function queries(count: number, next: () => number): ListQuery[] {
  return Array.from({ length: count }, (_, i) => {
    const word = next();
    const ip = parseIp(i % 4 === 3 ? `2001:db8:${(word >>> 16).toString(16)}::${(word & 0xffff).toString(16)}` : `${word >>> 24}.${(word >>> 16) & 255}.${(word >>> 8) & 255}.${word & 255}`);
    return { route: 'api', headers: {}, now: 0, ip: () => ip };
  });
}

function cpuNsPerLookup(set: ListSet, asked: readonly ListQuery[], rounds: number): number {
  let sink = 0;
  const start = process.cpuUsage();
  for (let r = 0; r < rounds; r++) for (const query of asked) if (set.check(query).action === 'deny') sink++;
  const used = process.cpuUsage(start);
  if (sink < 0) throw new Error('unreachable');
  return ((used.user + used.system) * 1_000) / (rounds * asked.length);
}

export async function runListsBench(options: BenchOptions): Promise<{ rows: (string | number)[][]; repeats: number }> {
  const cases = [
    { label: '10', set: new ListSet(entries(10, random(10), COMMON)) },
    { label: '100,000', set: new ListSet(entries(100_000, random(100_000), COMMON)) },
    { label: '100,000, every prefix length', set: new ListSet(entries(100_000, random(3), EVERY)) },
  ];
  const sets = cases.map((c) => c.set);
  const asked = queries(10_000, random(7));
  const repeats = pick(options, 3, 7);
  const rounds = pick(options, 5, 30);
  const samples = cases.map(() => [] as number[]);
  for (const set of sets) cpuNsPerLookup(set, asked, 2); // warm-up
  for (let r = 0; r < repeats; r++) for (const [i, set] of sets.entries()) samples[i]!.push(cpuNsPerLookup(set, asked, rounds));
  return { rows: cases.map((c, i) => [c.label, round(median(samples[i]!))]), repeats };
}

if (isMain(import.meta.url)) {
  void runMain(async () => {
    const result = await runListsBench(parseOptions());
    process.stdout.write(`ListSet.check, one client address (3/4 IPv4, 1/4 IPv6), ${result.repeats} repeats, medians:\n${textTable(['network entries', 'CPU ns/lookup'], result.rows)}\n`);
  });
}

// bench/lib/perf-profile.ts charges each perf sample to the innermost frame of
// Sluice's dist/, a library or the bench server on its stack: node's core,
// V8 and the kernel below it go with that frame. Samples in the form
// `perf script` prints them, with node's --perf-basic-prof names.
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { attribute, attributeRecording, folderOf, OUTSIDE, printPerfSplit } from '../../bench/lib/perf-profile.js';

const sample = (frames: string[], periodNs = 100_000) =>
  [`node  9587  2607.602427:     ${periodNs} cpu-clock: `, ...frames.map((frame) => `\t    7ffaec1fea11 ${frame}`), ''].join('\n');

// A write syscall under ioredis under Sluice's store: charged to ioredis, the innermost of the three.
const ioredisWrite = sample([
  'ffffffff8a0 do_writev ([kernel.kallsyms])',
  'JS:*writeOrBuffer node:internal/streams/writable:548:23+0x1 (/tmp/perf-9587.map)',
  'JS:*sendCommand /work/main/node_modules/ioredis/built/Redis.js:338:16+0x849 (/tmp/perf-9587.map)',
  'JS:*send file:///work/main/dist/stores/redis/scripts.js:113:14+0x719 (/tmp/perf-9587.map)',
  'JS:*runClosed file:///work/main/dist/limiter/guard.js:74:14+0xcb5 (/tmp/perf-9587.map)',
]);
// A Map lookup in the guard: charged to the guard's function.
const guardLookup = sample([
  '150c24f Builtins_FindOrderedHashMapEntry+0x58f (/usr/bin/node)',
  'JS:*runClosed file:///work/main/dist/limiter/guard.js:74:14+0xf53 (/tmp/perf-9587.map)',
  'JS:*decide file:///work/main/dist/limiter/fallback-step.js:9:17+0x26b (/tmp/perf-9587.map)',
]);
// An anonymous closure of dist/, twice the period.
const closure = sample(['JS:* file:///work/main/dist/stores/redis/connection-watch.js:74:31+0x327 (/tmp/perf-9587.map)'], 200_000);
// Timers on their own: no frame of dist/, a library or the bench.
const timers = sample(['JS:^processTimers node:internal/timers:504:25+0x191 (/tmp/perf-9587.map)', '805618 node::Environment::RunTimers+0x208 (/usr/bin/node)']);
const bench = sample(['JS:*decide file:///work/main/bench/lib/servers/sluice.ts:52:13+0x1 (/tmp/perf-9587.map)', 'JS:*decideOne file:///work/main/dist/limiter/decide-all.js:7:26+0x5c8 (/tmp/perf-9587.map)']);

describe('perf attribution (bench/lib/perf-profile.ts)', () => {
  it('charges every sample once, to its innermost dist/, library or bench frame, in µs per request', async () => {
    const text = [ioredisWrite, guardLookup, guardLookup, closure, timers, bench].join('\n');
    const costs = await attribute(text.split('\n'), 2);
    // 7 periods of 100 µs over 2 requests.
    assert.equal(costs.cpuUs, 350);
    assert.deepEqual(Object.fromEntries(costs.byFunction), {
      'library ioredis': 50,
      'limiter/guard.js runClosed': 100,
      'stores/redis/connection-watch.js (anonymous)': 100,
      [OUTSIDE]: 50,
      'the bench server file': 50,
    });
    assert.equal(costs.byFunction[0]![1], 100, 'largest first');
  });

  it('names the folder of a charge', () => {
    assert.equal(folderOf('limiter/guard.js runClosed'), 'limiter');
    assert.equal(folderOf('stores/redis/scripts.js send'), 'stores');
    assert.equal(folderOf('library @fastify/rate-limit'), 'libraries');
    assert.equal(folderOf('app.js startSluice'), 'app.js startSluice');
    assert.equal(folderOf(OUTSIDE), OUTSIDE);
  });

  it('prints what the second run adds over the first, by folder', async () => {
    const bare = { target: 'bare', costs: await attribute([ioredisWrite, timers].join('\n').split('\n'), 1) };
    const sluice = { target: 'sluice', costs: await attribute([ioredisWrite, guardLookup, closure].join('\n').split('\n'), 1) };
    const lines = printPerfSplit([bare, sluice]);
    assert.match(lines.at(-1)!, /^sluice − bare, under perf: 200 µs per request; by folder stores \+200, limiter \+100, libraries \+0, node, V8 and the kernel on their own \(socket reads, the event loop, timers, GC\) -100$/);
    assert.match(lines[2]!, /^bare \(200 µs\/request under perf\): by folder libraries 100, node, V8 .* 100; costliest functions of dist\/ $/);
    assert.match(lines[3]!, /^sluice \(400 µs\/request under perf\): .*; costliest functions of dist\/ stores\/redis\/connection-watch\.js \(anonymous\) 200, limiter\/guard\.js runClosed 100$/);
    assert.deepEqual(printPerfSplit([]), []);
  });

  it('lists the bench server\'s own file by folder, not among the functions of dist/', async () => {
    const withBench = { target: 'with bench', costs: await attribute([bench, guardLookup].join('\n').split('\n'), 1) };
    const [, , line] = printPerfSplit([withBench, withBench]);
    assert.match(line!, /by folder .*the bench server file 100.*; costliest functions of dist\/ limiter\/guard\.js runClosed 100$/);
  });

  it('rejects a recording perf could not read, rather than report zero µs', async () => {
    await assert.rejects(attributeRecording(join(tmpdir(), 'no-such-perf.data'), 100), /perf recorded no sample of the server \(perf script exited \d+\)/);
  });
});

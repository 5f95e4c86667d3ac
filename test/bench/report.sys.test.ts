// The bench suite's CI check: `bench/run-all.ts --quick --out <tmp>` completes
// and writes a well-formed report. It asserts shape only, never a timing: the
// figures depend on the machine.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SECTIONS } from '../../bench/lib/report.js';

describe('bench/run-all.ts --quick', { timeout: 600_000 }, () => {
  const out = mkdtempSync(join(tmpdir(), 'sluice-bench-report-'));
  let status: number | null = null;
  let output = '';

  before(() => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run-all.ts', '--quick', '--out', out], { encoding: 'utf8', timeout: 540_000 });
    status = run.status;
    output = `${run.stdout}\n${run.stderr}`;
  });
  after(() => rmSync(out, { recursive: true, force: true }));

  it('completes and writes REPORT.md and results.json', () => {
    assert.equal(status, 0, output.slice(-3000));
    assert.ok(existsSync(join(out, 'REPORT.md')));
    assert.ok(existsSync(join(out, 'results.json')));
  });

  it('has every section in the report', () => {
    const report = readFileSync(join(out, 'REPORT.md'), 'utf8');
    for (const section of SECTIONS) assert.match(report, new RegExp(`^## ${section}$`, 'm'), `section ${section}`);
  });

  it('records the machine and numeric figures in the JSON', () => {
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'));
    assert.equal(results.quick, true);
    for (const field of ['cores', 'memoryGiB']) assert.equal(typeof results.machine[field], 'number', field);
    for (const field of ['node', 'redis', 'date']) assert.equal(typeof results.machine[field], 'string', field);

    const isCount = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value >= 0;
    assert.ok(results.engine.cells.length > 0);
    for (const cell of results.engine.cells) assert.ok(isCount(cell.opsPerSec) && isCount(cell.p99Us), JSON.stringify(cell));
    for (const peer of results.engine.peers) assert.ok(isCount(peer.burstAllowed) && isCount(peer.bytesPerKey), peer.subject);
    for (const memory of results.engine.memory) assert.ok(isCount(memory.result.bytesPerBucket), memory.subject);
    for (const row of results.gateway.rows) assert.ok(isCount(row.requestsPerSec.median) && isCount(row.cpuUsPerRequest.median), row.target);
    const edgeSkipped = results.gateway.skipped.some((s: string) => s.startsWith('edge rows'));
    assert.ok(edgeSkipped || results.gateway.edge.rows.some((row: { protocol: string }) => row.protocol === 'HTTPS, HTTP/2'), 'gateway edge rows over HTTP/2');
    for (const row of results.gateway.edge.rows) assert.ok(isCount(row.requestsPerSec.median) && isCount(row.cpuUsPerRequest.median), `${row.target}, ${row.protocol}`);
    const pinnedSkipped = results.gateway.skipped.some((s: string) => s.startsWith('pinned runs'));
    for (const mode of ['paced-pinned', 'paced-pinned-apart']) {
      assert.ok(pinnedSkipped || results.gateway.rows.some((row: { mode: string }) => row.mode === mode), `gateway rows ${mode}`);
    }
    for (const row of results.hotkey.rows) assert.ok(isCount(row.allowed) && isCount(row.redisCallsPerRequest), row.mode);
    assert.ok(results.faults.buckets.every((b: { decisions: unknown }) => isCount(b.decisions)));
    for (const row of results.accuracy.rows) {
      assert.ok(isCount(row.allowed) && isCount(row.expected) && isCount(row.ratio), row.variant);
      assert.ok(row.bound.min <= row.bound.max && typeof row.withinBound === 'boolean', row.variant);
    }
    assert.ok(results.accuracy.rows.some((row: { group: string }) => row.group === 'leasing'), 'the accuracy bench has leasing variants');
    assert.ok(results.decision.rows.length >= 3, 'the decision bench has the gRPC, forward-auth and proxied rows');
    for (const row of results.decision.rows) assert.ok(isCount(row.perSec) && isCount(row.cpuUs.total), row.target);
    for (const row of results.decision.accuracy) assert.ok(isCount(row.allowed) && isCount(row.expected) && typeof row.withinOnePercent === 'boolean', row.face);
    assert.equal(results.accuracy.multi.length, 6, 'several-limit rows: three layouts × K = 1, 4');
    for (const row of results.accuracy.multi) assert.ok(isCount(row.allowed) && isCount(row.expected) && Number.isFinite(row.drainedByRefused), row.variant);
    for (const row of results.accuracy.multiCost) assert.ok(isCount(row.decisionsPerSec) && isCount(row.redisCallsPerRequest), row.variant);
    for (const row of results.dashboard ?? []) assert.ok(isCount(row.requestsPerSec) && isCount(row.cpuUsPerRequest), `dashboard ${row.page} ${row.load}`);
    for (const line of results.scale.lines) assert.equal(typeof line.withoutLeasing, 'number', line.what);
  });
});

describe('bench/cost.ts --quick --profile --perf', { timeout: 300_000 }, () => {
  it('measures the six targets and the peer\'s twin side by side, prints each ratio against its target and the twin\'s spread, profiles each, and splits the script call under perf', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/cost.ts', '--quick', '--profile', '--perf'], { encoding: 'utf8', timeout: 240_000 });
    const output = `${run.stdout}\n${run.stderr}`;
    assert.equal(run.status, 0, output.slice(-3000));
    assert.match(output, /^Sluice, no limiter, one Redis PING per request +saturation +[\d,]+/m);
    assert.match(output, /^Fastify \+ @fastify\/rate-limit \(Redis\) +paced 2500\/s +[\d,]+/m);
    assert.match(output, /^decision above the PING floor \(one script call ÷ PING − 1\), saturation: -?[\d.]+ \(target ≤ 0\.10: (met|missed)\)/m);
    assert.match(output, /^Sluice, no limiter, one bare EVALSHA of its script per request +paced 2500\/s +[\d,]+/m);
    assert.match(output, /^the bare script call above PING \(bare EVALSHA ÷ PING − 1\), paced: -?[\d.]+$/m);
    assert.match(output, /^Sluice's code above the bare script call \(one script call ÷ bare EVALSHA − 1\), paced: -?[\d.]+ \(target ≤ 0\.05: (met|missed)\)$/m);
    assert.match(output, /^Sluice's code above the bare script call \(one script call ÷ bare EVALSHA − 1\), saturation: -?[\d.]+$/m);
    assert.match(output, /^CPU per request ÷ Fastify peer, by default, paced: [\d.]+ \(target ≤ 0\.9: (met|missed)\)/m);
    assert.match(output, /^noise: the Fastify peer ÷ its second copy, saturation: CPU per request [\d.]+ \(rounds [\d.]+–[\d.]+\), requests\/s [\d.]+/m);
    assert.match(output, /^noise: the Fastify peer ÷ its second copy, paced: CPU per request [\d.]+ \(rounds [\d.]+–[\d.]+\)$/m);
    assert.match(output, /^Sluice, Redis, one script call per request \([\d.]+ µs\/request under the profiler\): .*ioredis [\d.]+ %/m);
    // Under perf: the bare call's ioredis and Sluice's limiter, charged by function; then the difference by folder.
    assert.match(output, /^Sluice, no limiter, one bare EVALSHA of its script per request \([\d.]+ µs\/request under perf\): by folder .*libraries [\d.]+/m);
    // The limiter's share shows by folder; which dist/ functions make the top twelve varies with the machine's noise.
    assert.match(output, /^Sluice, Redis, one script call per request \([\d.]+ µs\/request under perf\): by folder .*limiter [\d.]+.*; costliest functions of dist\/ [\w/-]+\.js \S+ [\d.]+/m);
    assert.match(output, /^Sluice, Redis, one script call per request − Sluice, no limiter, one bare EVALSHA of its script per request, under perf: -?[\d.]+ µs per request; by folder .*limiter \+[\d.]+/m);
  });
});

describe('bench/decision-overhead.ts --quick', { timeout: 180_000 }, () => {
  it("times the engine and the bare answer, hot and with the caches evicted, and prints the engine's own ns of each and the bytes it allocates", () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/decision-overhead.ts', '--quick'], { encoding: 'utf8', timeout: 150_000 });
    const output = `${run.stdout}\n${run.stderr}`;
    assert.equal(run.status, 0, output.slice(-3000));
    for (const setting of ['hot', 'cold']) assert.match(output, new RegExp(`^${setting} +[\\d,]+ +[\\d,]+ +-?[\\d,]+ *$`, 'm'));
    assert.match(output, /^heap bytes allocated per decision \(the median of up to 60 batches of 200 without a collection\): engine \d+, bare \d+, the engine's own -?\d+$/m);
  });
});

describe('bench/own-code.ts --quick', { timeout: 240_000 }, () => {
  it("measures the bare script call, its second copy, Sluice's store alone and its one script call, round by round, and prints the own code's medians (split into store and engine) and the noise's, with their interval", () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/own-code.ts', '--quick'], { encoding: 'utf8', timeout: 210_000 });
    const output = `${run.stdout}\n${run.stderr}`;
    assert.equal(run.status, 0, output.slice(-3000));
    assert.match(output, /^Sluice, Redis, one script call per request +[\d.]+ *$/m);
    assert.match(output, /^the same bare-script server, a second copy \(noise\) +[\d.]+ *$/m);
    assert.match(output, /^Sluice's Redis store alone in place of the bare EVALSHA, no engine around it +[\d.]+ *$/m);
    const interval = String.raw`\(90 % interval of the median -?[\d.]+–-?[\d.]+; middle half of the rounds -?[\d.]+–-?[\d.]+\)`;
    assert.match(output, new RegExp(`^Sluice's code above the bare script call \\(one script call ÷ bare EVALSHA − 1\\), paced: -?[\\d.]+ ${interval} \\(target ≤ 0\\.05: (met|missed|not told apart from 0\\.05 by these rounds)\\)$`, 'm'));
    assert.match(output, new RegExp(`^  of it, the store \\(the store alone ÷ bare EVALSHA − 1\\): -?[\\d.]+ ${interval}$`, 'm'));
    assert.match(output, new RegExp(`^  of it, the engine around the store \\(one script call ÷ the store alone − 1\\): -?[\\d.]+ ${interval}$`, 'm'));
    assert.match(output, new RegExp(`^noise: the bare-script server ÷ its second copy − 1, paced: -?[\\d.]+ ${interval}$`, 'm'));
  });
});

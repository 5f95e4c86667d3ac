import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { forkServer } from './lib/children.js';
import { paced, saturate } from './lib/http-load.js';
import { benchRedis } from './lib/servers.js';
const OLD = '../../../../old/bench/lib/servers/sluice.ts';
const redis = await benchRedis();
const upstream = await forkServer('upstream', 'upstream.ts', {});
const base = { upstream: upstream.url, redisUrl: redis.url, limiter: 'redis', exact: true };
const which = (process.argv[2] ?? 'old,new').split(',');
for (const [name, file] of ([['old', OLD], ['new', 'sluice.ts'], ['perf', '../../../../wt-perf/bench/lib/servers/sluice.ts']] as const).filter(([n]) => which.includes(n))) {
  const dir = mkdtempSync(join(tmpdir(), `prof-${name}-`));
  const k = await forkServer(name, file, base, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  await saturate(k.url, 2000);
  const r = await paced(k.url, 2500, 8000);
  await k.stop();
  const prof = JSON.parse(readFileSync(join(dir, readdirSync(dir)[0]!), 'utf8'));
  const self = new Map<number, number>();
  const dt: number[] = prof.timeDeltas; const samples: number[] = prof.samples;
  for (let i = 0; i < samples.length; i++) self.set(samples[i]!, (self.get(samples[i]!) ?? 0) + (dt[i] ?? 0));
  const byFn = new Map<string, number>(); const byFile = new Map<string, number>();
  for (const node of prof.nodes) {
    const t = self.get(node.id) ?? 0; if (!t) continue;
    const url: string = node.callFrame.url; const m = url.match(/\/dist\/(.*)$/);
    const file = m ? m[1]! : url.includes('node_modules') ? 'lib:' + (url.split('node_modules/')[1] ?? '').split('/')[0] : url ? 'other' : '(' + node.callFrame.functionName + ')';
    byFile.set(file, (byFile.get(file) ?? 0) + t);
    if (m) byFn.set(`${m[1]} ${node.callFrame.functionName}`, (byFn.get(`${m[1]} ${node.callFrame.functionName}`) ?? 0) + t);
  }
  const per = (t: number) => (t / r.completed).toFixed(2);
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  console.log(`== ${name}: completed ${r.completed}, profiled µs/req ${per(total)}`);
  const dist = [...byFile].filter(([f]) => !f.startsWith('lib:') && !f.startsWith('(') && f !== 'other').reduce((a, [, t]) => a + t, 0);
  console.log('dist total µs/req', per(dist));
  const { writeFileSync } = await import('node:fs');
  writeFileSync(`/tmp/bench/prof-${name}.json`, JSON.stringify({ completed: r.completed, byFile: Object.fromEntries([...byFile].map(([f, t]) => [f, t / r.completed])), byFn: Object.fromEntries([...byFn].map(([f, t]) => [f, t / r.completed])) }));
}
await upstream.stop(); await redis.release();

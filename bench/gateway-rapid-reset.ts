// npm run bench:gateway's rapid-reset row (or alone: tsx bench/gateway-rapid-reset.ts [--quick]).
// Sluice over HTTPS/HTTP/2 in its own process, in front of the bench upstream.
// A second client sends one request at a time on its own HTTP/2 connection:
// first alone, then while an attacker (a process of its own at the lowest CPU
// priority, lib/rapid-reset-attacker.ts) writes HEADERS and RST_STREAM CANCEL
// for stream after stream in the same packets (CVE-2023-44487), connecting
// again whenever the gateway cuts it (from 127.0.0.2, so the cool-down that
// then refuses its address at accept is measured too), then alone again. The row is that
// client's p99 before, during and after the attack, and during/before, with
// what the attacker sent.
import { readFileSync } from 'node:fs';
import { type ClientHttp2Session, connect } from 'node:http2';
import { fork } from 'node:child_process';
import { setPriority } from 'node:os';
import type { RapidResetStats } from '../test/helpers/rapid-reset.js';
import { makeCertificates } from '../test/helpers/tls-certs.js';
import { forkServer } from './lib/children.js';
import { isMain, onCleanup, runMain } from './lib/cleanup.js';
import { LatencyRecorder, round } from './lib/latency.js';
import { type BenchOptions, parseOptions, pick } from './lib/options.js';

/** The attacker connects from an address of its own, as a real one would: the gateway's cool-down of a cut address (limits.http2ResetCooldownMs) then falls on it, not on the client measured from 127.0.0.1. */
const ATTACKER_ADDRESS = '127.0.0.2';

export interface RapidResetRow {
  attackMs: number;
  p99BeforeMs: number;
  p99DuringMs: number;
  p99AfterMs: number;
  /** p99 during the attack over p99 before it. */
  ratio: number;
  servedDuring: number;
  failedDuring: number;
  /** The attacker's connections, those refused at accept (its address cooling down), the streams it opened and reset, and the GOAWAYs it read. */
  attacker: { sessions: number; refused: number; streams: number; goaways: number };
}


/** One request after another for `ms`; latencies recorded, failures counted. */
async function victim(session: ClientHttp2Session, ms: number): Promise<{ recorder: LatencyRecorder; served: number; failed: number }> {
  const recorder = new LatencyRecorder();
  let served = 0;
  let failed = 0;
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const started = performance.now();
    const status = await new Promise<number>((resolve) => {
      const stream = session.request({ ':path': '/orders', 'x-api-key': 'bench-victim' }, { endStream: true });
      let code = 0;
      stream.on('response', (head) => {
        code = Number(head[':status']);
      });
      stream.on('error', () => {});
      stream.resume();
      stream.on('close', () => resolve(code));
    });
    recorder.recordMs(performance.now() - started);
    if (status === 200) served++;
    else failed++;
  }
  return { recorder, served, failed };
}

export async function runRapidResetBench(options: BenchOptions, progress: (line: string) => void = console.log): Promise<RapidResetRow> {
  const certs = makeCertificates();
  onCleanup(() => certs.remove());
  const upstream = await forkServer('upstream', 'upstream.ts', {});
  const sluice = await forkServer('Sluice, HTTP/2', 'sluice.ts', { upstream: upstream.url, limiter: 'memory', tls: { cert: certs.serverCert, key: certs.serverKey } });
  const ca = readFileSync(certs.ca);
  const session = connect(sluice.url, { ca });
  session.on('error', () => {});
  try {
    const attackMs = 5_000;
    const quietMs = pick(options, 3_000, 10_000);
    await victim(session, 500); // warm-up
    progress('rapid reset: the second client alone');
    const before = await victim(session, quietMs);
    progress(`rapid reset: under attack for ${attackMs / 1000} s`);
    const attacker = fork(new URL('./lib/rapid-reset-attacker.ts', import.meta.url), [JSON.stringify({ url: sluice.url, ca: ca.toString('base64'), localAddress: ATTACKER_ADDRESS })], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    onCleanup(() => void attacker.kill('SIGKILL'));
    // At nice 19 the attacker gets only the CPU the gateway, upstream and client leave: on a machine they
    // share, the figure is then what the attack costs the gateway, not the core the attacker's own writing
    // takes from the client (a real attacker is elsewhere). The row's connection count says how hard it hit.
    setPriority(attacker.pid!, 19);
    await new Promise((go) => attacker.once('message', go)); // 'attacking': its first connection is up
    const during = await victim(session, attackMs);
    const attackerDone = new Promise<RapidResetStats>((go) => attacker.once('message', (stats: RapidResetStats) => go(stats)));
    attacker.send('stop');
    const attack = await attackerDone;
    progress('rapid reset: after the attack');
    const afterAttack = await victim(session, quietMs);
    const p99 = (run: { recorder: LatencyRecorder }) => round(run.recorder.summary().p99Us / 1000, 2);
    return { attackMs, p99BeforeMs: p99(before), p99DuringMs: p99(during), p99AfterMs: p99(afterAttack), ratio: round(p99(during) / p99(before), 2), servedDuring: during.served, failedDuring: during.failed + afterAttack.failed, attacker: { sessions: attack.sessions, refused: attack.refused, streams: attack.streams, goaways: attack.goaways.length } };
  } finally {
    session.destroy();
    await sluice.stop();
    await upstream.stop();
  }
}

export function printRapidReset(row: RapidResetRow): string {
  return [
    `rapid reset (an attacker at nice 19 writing HEADERS + RST_STREAM for every stream it opens, connecting again when cut, ${row.attackMs / 1000} s): a second client's p99 before ${row.p99BeforeMs} ms, during ${row.p99DuringMs} ms, after ${row.p99AfterMs} ms`,
    `  during/before ${row.ratio}x; ${row.servedDuring} answered 200 during the attack, ${row.failedDuring} not 200 during or after`,
    `  the attacker (from ${ATTACKER_ADDRESS}): ${row.attacker.sessions} connections, ${row.attacker.refused} refused at accept, ${row.attacker.streams} streams opened and reset, ${row.attacker.goaways} GOAWAYs read`,
  ].join('\n');
}

if (isMain(import.meta.url)) {
  await runMain(async () => {
    console.log(printRapidReset(await runRapidResetBench(parseOptions())));
  });
}

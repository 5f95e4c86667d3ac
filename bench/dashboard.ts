// npm run bench:dashboard [-- --quick]
// What the operator's page costs the gateway: Sluice (Redis store, admin
// listener) under the gateway bench's load, alternately with the dashboard
// open and signed in in Chromium (polling every second) and with the tab on
// about:blank. Runs alternate (closed, open, closed, open…); medians with
// ranges; CPU µs per request of the gateway process, which also serves the page.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { type Child, forkServer } from './lib/children.js';
import { isMain, onCleanup, runMain } from './lib/cleanup.js';
import { type LoadResult, paced, saturate } from './lib/http-load.js';
import { median, round } from './lib/latency.js';
import { type BenchOptions, parseOptions, pick } from './lib/options.js';
import { benchRedis } from './lib/servers.js';
import { textTable } from './lib/table.js';

const CHROMIUM = '/usr/bin/chromium';
const TOKEN = 'bench-dashboard-token-0123456789';
const PACED_RATE = 2500;

export const hasChromium = (): boolean => existsSync(CHROMIUM);

export interface DashboardRow {
  page: 'closed' | 'open';
  load: string;
  requestsPerSec: number;
  p99Ms: number;
  cpuUsPerRequest: number;
  runs: { requestsPerSec: number; p99Ms: number; cpuUsPerRequest: number }[];
}

export async function runDashboardBench(options: BenchOptions, progress: (line: string) => void = console.log): Promise<DashboardRow[]> {
  const repeats = pick(options, 2, 5);
  const durationMs = pick(options, 1000, 5000);
  const redis = await benchRedis();
  const children: Child[] = [];
  const profile = mkdtempSync(join(tmpdir(), 'sluice-bench-chromium-'));
  let context: BrowserContext | undefined;
  try {
    const upstream = await forkServer('upstream', 'upstream.ts', {});
    children.push(upstream);
    const adminPort = await freePort();
    const sluice = await forkServer('Sluice, Redis store, admin', 'sluice-dashboard.ts', { upstream: upstream.url, redisUrl: redis.url, adminPort, token: TOKEN });
    children.push(sluice);
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic'],
    });
    onCleanup(() => context?.close());
    const page = context.pages()[0] ?? (await context.newPage());
    await saturate(sluice.url, pick(options, 300, 2000));
    const samples = new Map<string, { requestsPerSec: number; p99Ms: number; cpuUsPerRequest: number }[]>();
    const run = async (state: 'closed' | 'open', load: string, go: () => Promise<LoadResult>) => {
      const cpu = sluice.cpuMicros();
      const result = await go();
      const key = `${state}\u0000${load}`;
      samples.set(key, [...(samples.get(key) ?? []), { requestsPerSec: result.requestsPerSec, p99Ms: result.p99Ms, cpuUsPerRequest: round((sluice.cpuMicros() - cpu) / Math.max(1, result.completed), 1) }]);
    };
    for (let repeat = 1; repeat <= repeats; repeat++) {
      for (const state of ['closed', 'open'] as const) {
        progress(`dashboard: run ${repeat}/${repeats}, page ${state}`);
        if (state === 'open') await openDashboard(page, `http://127.0.0.1:${adminPort}/ui/`);
        else await page.goto('about:blank');
        await run(state, 'saturation', () => saturate(sluice.url, durationMs));
        await run(state, `paced ${PACED_RATE}/s`, () => paced(sluice.url, PACED_RATE, durationMs));
      }
    }
    return [...samples].map(([key, runs]) => {
      const [page, load] = key.split('\u0000') as ['closed' | 'open', string];
      const med = (pick: (r: (typeof runs)[number]) => number) => round(median(runs.map(pick)), 2);
      return { page, load, requestsPerSec: med((r) => r.requestsPerSec), p99Ms: med((r) => r.p99Ms), cpuUsPerRequest: med((r) => r.cpuUsPerRequest), runs };
    });
  } finally {
    await context?.close().catch(() => undefined);
    rmSync(profile, { recursive: true, force: true });
    for (const child of children.reverse()) await child.stop();
    await redis.release();
  }
}

/**
 * Signs in, opens the routes view (live charts and the history: the view that
 * asks the most of the admin API) and waits for its first live refresh, so the
 * page is polling while the load runs.
 */
async function openDashboard(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.getByLabel('Admin token').fill(TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#nav a[data-nav-link="routes"]').click();
  await page.locator('[data-route="create-order"]').waitFor({ timeout: 10_000 });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export function printDashboard(rows: DashboardRow[]): string {
  const range = (values: number[]) => `${Math.min(...values)}–${Math.max(...values)}`;
  return textTable(
    ['page', 'load', 'req/s', 'p99 ms', 'CPU µs/req', 'req/s range', 'CPU range'],
    rows.map((r) => [r.page, r.load, r.requestsPerSec, r.p99Ms, r.cpuUsPerRequest, range(r.runs.map((x) => x.requestsPerSec)), range(r.runs.map((x) => x.cpuUsPerRequest))]),
  );
}

if (isMain(import.meta.url)) {
  await runMain(async () => {
    const rows = await runDashboardBench(parseOptions());
    console.log(`\n${printDashboard(rows)}\nmedians of the runs; the page polls /ui/api/overview every second while open`);
  });
}

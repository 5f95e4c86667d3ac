// dashboards/grafana.json against a real instance: every metric its queries
// name is one that instance's /metrics exposes (with the labels the queries
// group by), and no series carries a tenant or a key as a label value.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../gateway/support.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';

const dashboard = JSON.parse(readFileSync(new URL('../../dashboards/grafana.json', import.meta.url), 'utf8')) as {
  panels: { title: string; targets: { expr: string }[] }[];
  templating: { list: { query?: unknown; definition?: string }[] };
};
const yaml = `
routes:
  - { id: create-order, methods: [POST], path: /orders, upstream: "\${UPSTREAM}" }
tenants: { unknownKeys: default-rule }
defaultRule: { policy: token_bucket, capacity: 2, refillPerSecond: 0.01 }
`;

/** Every query of the dashboard, panels and template variables. */
function queries(): string[] {
  const exprs = dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr));
  for (const variable of dashboard.templating.list) if (variable.definition) exprs.push(variable.definition);
  return exprs;
}

/** Metric families declared on /metrics, with the sample names and label names seen for each. */
function parseExposition(text: string): Map<string, { type: string; labels: Set<string> }> {
  const families = new Map<string, { type: string; labels: Set<string> }>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) families.set(name!, { type: type!, labels: new Set() });
  for (const [, sample, labels] of text.matchAll(/^([a-z_:]+)\{([^}]*)\}/gm)) {
    const family = families.get(sample!) ?? families.get(sample!.replace(/_(bucket|sum|count)$/, ''));
    for (const [, label] of labels!.matchAll(/([a-z_]+)="/g)) family?.labels.add(label!);
  }
  return families;
}

describe('the Grafana dashboard', () => {
  let redis: RedisServer;
  let upstream: TestUpstream;
  let app: RunningSluice;
  let dir: string;

  before(async () => {
    [redis, upstream] = await Promise.all([startRedis(), startUpstream()]);
    dir = mkdtempSync(join(tmpdir(), 'sluice-grafana-'));
    const env = { UPSTREAM: upstream.url, SLUICE_REDIS_URL: redis.url, SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_DATA_DIR: dir };
    app = await startGateway(yaml, env, { ruleStore: true, admin: true });
    for (let i = 0; i < 40; i++) await call(`${app.url}/orders`, { method: 'POST', headers: { 'x-api-key': `tenant-secret-${i % 10}` } });
  });
  after(async () => {
    await app?.close();
    await Promise.allSettled([redis?.stop(), upstream?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('names only metrics that /metrics exposes, grouped by labels they carry', async () => {
    const families = parseExposition((await call(`${app.adminUrl}/metrics`)).body);
    const named = new Set<string>();
    for (const expr of queries()) {
      for (const [metric] of expr.matchAll(/\bsluice_[a-z_]+/g)) {
        const family = families.has(metric) ? metric : metric.replace(/_(bucket|sum|count)$/, '');
        assert.ok(families.has(family), `${metric} (in ${expr}) is not on /metrics`);
        if (family !== metric) assert.equal(families.get(family)!.type, 'histogram', `${metric} is a histogram series`);
        named.add(family);
      }
    }
    for (const needed of ['sluice_decisions_total', 'sluice_degraded_decisions_total', 'sluice_breaker_transitions_total', 'sluice_decision_latency_seconds', 'sluice_instances']) {
      assert.ok(named.has(needed), `the dashboard charts ${needed}`);
    }
    assert.deepEqual([...families.get('sluice_decisions_total')!.labels].sort(), ['outcome', 'route']);
    assert.deepEqual([...families.get('sluice_decision_latency_seconds')!.labels].sort(), ['le', 'source']);
    for (const expr of queries()) {
      for (const [, labels, metricPart] of expr.matchAll(/by \(([^)]*)\) \((?:rate|increase)\(([a-z_]+)/g)) {
        const family = families.get(metricPart!) ?? families.get(metricPart!.replace(/_(bucket|sum|count)$/, ''));
        const seen = family?.labels ?? new Set();
        // Families with samples must carry every label a panel groups by.
        if (seen.size > 0) for (const label of labels!.split(',').map((l) => l.trim())) assert.ok(seen.has(label), `${metricPart} has no label ${label}`);
      }
    }
  });

  it('carries route ids and outcomes, never tenants or keys', async () => {
    const text = (await call(`${app.adminUrl}/metrics`)).body;
    assert.match(text, /sluice_decisions_total\{route="create-order",outcome="refused"\} [1-9]/);
    assert.doesNotMatch(text, /tenant-secret/);
    assert.doesNotMatch(text, /tenant=|key=|ip=/);
    assert.match(text, /^sluice_instances 1$/m);
    assert.match(text, /^sluice_engine_mode\{mode="redis"\} 1$/m);
  });
});

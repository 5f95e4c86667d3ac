// dashboards/grafana.json against a real instance: every metric its queries
// name is one that instance's /metrics exposes (with the labels the queries
// group by), and no series carries a tenant or a key as a label value.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';

const dashboard = JSON.parse(readFileSync(new URL('../../dashboards/grafana.json', import.meta.url), 'utf8')) as {
  panels: { title: string; targets: { expr: string }[] }[];
  templating: { list: { query?: unknown; definition?: string }[] };
  annotations?: { list: { name: string; expr: string }[] };
};
const yaml = `
routes:
  - { id: create-order, methods: [POST], path: /orders, upstream: "\${UPSTREAM}" }
tenants: { unknownKeys: default-rule }
defaultRule: { policy: token_bucket, capacity: 2, refillPerSecond: 0.01 }
`;

/** Every query of the dashboard: panels, template variables and annotations. */
function queries(): string[] {
  const exprs = dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr));
  for (const variable of dashboard.templating.list) if (variable.definition) exprs.push(variable.definition);
  for (const annotation of dashboard.annotations?.list ?? []) exprs.push(annotation.expr);
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
    const charted = ['sluice_decisions_total', 'sluice_degraded_decisions_total', 'sluice_breaker_transitions_total', 'sluice_decision_latency_seconds', 'sluice_instances'];
    charted.push('sluice_requests_total', 'sluice_request_duration_seconds', 'sluice_upstream_requests_total', 'sluice_upstream_ejections_total', 'sluice_upstream_response_seconds');
    for (const needed of charted) {
      assert.ok(named.has(needed), `the dashboard charts ${needed}`);
    }
    assert.deepEqual([...families.get('sluice_decisions_total')!.labels].sort(), ['outcome', 'route']);
    assert.deepEqual([...families.get('sluice_decision_latency_seconds')!.labels].sort(), ['le', 'source']);
    assert.deepEqual([...families.get('sluice_requests_total')!.labels].sort(), ['class', 'route']);
    assert.deepEqual([...families.get('sluice_request_duration_seconds')!.labels].sort(), ['le', 'route']);
    assert.deepEqual(dashboard.annotations?.list.map((a) => a.name), ['Breaker opened', 'Breaker closed'], 'breaker events as annotations');
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
    // The 40 requests sent, each in its status class: admitted (2xx) or refused (429), none lost.
    const sample = (pattern: RegExp) => Number(pattern.exec(text)?.[1]);
    const ok = sample(/^sluice_requests_total\{route="create-order",class="2xx"\} (\d+)$/m);
    const refused = sample(/^sluice_requests_total\{route="create-order",class="429"\} (\d+)$/m);
    assert.ok(ok > 0 && refused > 0, `2xx ${ok}, 429 ${refused}`);
    assert.equal(ok + refused, 40);
    assert.equal(sample(/^sluice_request_duration_seconds_count\{route="create-order"\} (\d+)$/m), 40);
    assert.match(text, /^sluice_engine_mode\{mode="redis"\} 1$/m);
  });
});

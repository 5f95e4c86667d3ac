// What per-key overrides cost on the request path: RouteLimits.resolve for an
// IP-keyed limit, in one run, side by side: without overrides, with 10,000
// IPv4 and 10,000 IPv6 overrides spread over 8 prefix lengths each (clients that
// match one and clients that match none), and for comparison the same limit
// with 1 override. In process, no I/O: it measures the lookup alone.
//   npx tsx bench/overrides.ts [--iterations 1000000]
import { parseArgs } from 'node:util';
import type { RouteConfig } from '../src/config/types.js';
import type { Rule } from '../src/policies/rule.js';
import { ClientIpResolver } from '../src/request-limits/client-ip.js';
import { RouteLimits } from '../src/request-limits/request-limits.js';
import { buildOverrideSet } from '../src/rules/override-set.js';
import { defaultResolved } from '../src/rules/rule-set.js';
import type { StoredOverride } from '../src/rules/types.js';

const { values } = parseArgs({ options: { iterations: { type: 'string', default: '1000000' } } });
const iterations = Number(values.iterations);
const rule: Rule = { policy: 'fixed_window', limit: 10, windowMs: 1000 };
const V4_LENGTHS = [8, 12, 16, 20, 24, 28, 30, 32];
const V6_LENGTHS = [32, 40, 48, 56, 64, 80, 96, 128];

function overrides(count: number): StoredOverride[] {
  const out: StoredOverride[] = [];
  for (let i = 0; i < count; i++) {
    const v4 = V4_LENGTHS[i % V4_LENGTHS.length]!;
    const v6 = V6_LENGTHS[i % V6_LENGTHS.length]!;
    // 10.x.y.0-ish networks and 2001:db8:<i>:: networks, host bits clear.
    const a = (10 << 24) | ((i * 2654435761) >>> 8);
    const network = v4 === 0 ? 0 : ((a >>> (32 - v4)) << (32 - v4)) >>> 0;
    out.push({ limitId: 'per-ip', selector: `ip:${network >>> 24}.${(network >>> 16) & 255}.${(network >>> 8) & 255}.${network & 255}/${v4}`, rule, updatedAt: '' });
    out.push({ limitId: 'per-ip', selector: `ip:2001:db8:${(i & 0xffff).toString(16)}::/${v6}`, rule, updatedAt: '' });
  }
  return out;
}

function limitsWith(stored: StoredOverride[]): RouteLimits {
  const set = buildOverrideSet(stored);
  const route = { id: 'r', cost: 1, limits: [{ id: 'per-ip', key: { kind: 'ip' }, rule }] } as unknown as RouteConfig;
  const resolver = { resolve: () => defaultResolved(rule), overrides: () => set };
  return new RouteLimits(route, resolver, new ClientIpResolver({ trustedProxies: [], header: 'x-forwarded-for' }), 64);
}

/** Nanoseconds per resolve, over `iterations`, after a warm-up. */
function measure(limits: RouteLimits, addresses: string[]): number {
  const requests = addresses.map((remoteAddress) => ({ headers: {}, socket: { remoteAddress } }));
  for (let i = 0; i < 100_000; i++) limits.resolve(undefined, requests[i % requests.length]!);
  const started = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) limits.resolve(undefined, requests[i % requests.length]!);
  return Number(process.hrtime.bigint() - started) / iterations;
}

const clients = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i % 250}`);
const none = limitsWith([]);
const one = limitsWith([{ limitId: 'per-ip', selector: 'ip:203.0.113.7', rule, updatedAt: '' }]);
const many = limitsWith(overrides(10_000));
const v4 = clients('192.0.2.', 1000);
const v4Matching = Array.from({ length: 1000 }, (_, i) => `10.${i % 256}.${(i * 7) % 256}.1`);
const v6 = Array.from({ length: 1000 }, (_, i) => `2001:db9:${i.toString(16)}::1`);
const v6Matching = Array.from({ length: 1000 }, (_, i) => `2001:db8:${i.toString(16)}::1`);
// Each case runs twice, interleaved, and keeps its faster run: the first runs
// see code the JIT has not yet seen in every shape.
const cases: Record<string, () => number> = {
  'IPv4, no overrides': () => measure(none, v4),
  'IPv4, 1 override, no match': () => measure(one, v4),
  'IPv4, 20,000 overrides, no match': () => measure(many, v4),
  'IPv4, 20,000 overrides, matching': () => measure(many, v4Matching),
  'IPv6, no overrides': () => measure(none, v6),
  'IPv6, 20,000 overrides, no match': () => measure(many, v6),
  'IPv6, 20,000 overrides, matching': () => measure(many, v6Matching),
};
const rows: Record<string, number> = {};
for (let round = 0; round < 2; round++) {
  for (const [name, run] of Object.entries(cases)) rows[name] = Math.min(rows[name] ?? Number.POSITIVE_INFINITY, run());
}
const base = rows['IPv4, no overrides'] ?? 1;
for (const [name, ns] of Object.entries(rows)) console.log(`${name.padEnd(36)} ${ns.toFixed(0).padStart(6)} ns/resolve   ×${(ns / base).toFixed(2)}`);

// A flood of requests from random client addresses: each request names a new
// IPv4 address or IPv6 /128 in X-Forwarded-For, as a gateway behind a trusted
// proxy (127.0.0.1) would see it. Shared by bench/ip-flood.ts and its test.
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'undici';

/** A random public-looking IPv4 address or a random IPv6 /128 (half each). */
export function randomIp(): string {
  const bytes = randomBytes(16);
  if ((bytes[0] ?? 0) & 1) return `${1 + ((bytes[1] ?? 0) % 223)}.${bytes[2]}.${bytes[3]}.${bytes[4]}`;
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  groups[0] = '2001';
  return groups.join(':');
}

export interface FloodResult {
  statuses: Record<number, number>;
  errors: number;
}

/** Sends `count` requests to `url`, `concurrency` at a time, each from a new random address. */
export async function ipFlood(url: string, count: number, concurrency = 64): Promise<FloodResult> {
  const agent = new Agent({ connections: concurrency, keepAliveTimeout: 5_000 });
  const result: FloodResult = { statuses: {}, errors: 0 };
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      try {
        const response = await request(url, { method: 'POST', headers: { 'x-forwarded-for': randomIp() }, dispatcher: agent });
        await response.body.dump();
        result.statuses[response.statusCode] = (result.statuses[response.statusCode] ?? 0) + 1;
      } catch {
        result.errors++;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    await agent.close();
  }
  return result;
}

/** The config both use: one anonymous route limited per client IP, the proxy at 127.0.0.1 trusted. */
export function floodConfig(upstream: string, store: string, ratePerSecond = 1): string {
  return `
routes:
  - id: login
    path: /login
    upstream: ${upstream}
    anonymous: true
    limits: [{ id: login-per-ip, key: ip, rule: { policy: leaky_bucket, ratePerSecond: ${ratePerSecond}, burst: 5, nodelay: true } }]
clientIp: { trustedProxies: [127.0.0.1/32] }
${store}
`;
}

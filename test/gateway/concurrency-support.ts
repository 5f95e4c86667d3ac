// Helpers for the concurrency-limit tests: an upstream that holds each request
// until the test lets it go (so requests stay in flight). Waiting for a
// condition the gateway reaches asynchronously is test/helpers/poll.ts's until.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { request } from 'undici';
import { resilienceRegistry } from '../../src/metrics/registry.js';
import { agent, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';

export interface HoldingUpstream extends TestUpstream {
  /** Requests held now, oldest first. */
  readonly held: { req: IncomingMessage; res: ServerResponse }[];
  /** Requests that reached it so far. */
  readonly arrived: number;
  /** Answers the oldest held request with 200. */
  finishOne(): void;
  finishAll(): void;
}

export async function startHoldingUpstream(): Promise<HoldingUpstream> {
  const held: HoldingUpstream['held'] = [];
  let arrived = 0;
  const upstream = await startUpstream((req, res) => {
    arrived++;
    req.resume();
    const entry = { req, res };
    held.push(entry);
    res.once('close', () => held.splice(held.indexOf(entry) >>> 0, held.includes(entry) ? 1 : 0));
  });
  const finish = (entry: { res: ServerResponse } | undefined) => entry?.res.end('{"done":true}');
  const holding = Object.defineProperty(upstream, 'arrived', { get: () => arrived }) as TestUpstream & { arrived: number };
  return Object.assign(holding, {
    held,
    finishOne: () => finish(held.shift()),
    finishAll: () => {
      for (const entry of held.splice(0)) finish(entry);
    },
  });
}

/** A request whose response the test reads later (it stays open while the upstream holds it). */
export function send(url: string, key: string, signal?: AbortSignal): Promise<{ status: number; body: string; headers: Record<string, string | string[] | undefined> }> {
  return request(url, { headers: { 'x-api-key': key }, dispatcher: agent, signal }).then(async (response) => ({ status: response.statusCode, headers: response.headers, body: await response.body.text() }));
}

/** This process's `sluice_concurrency_in_flight` for one limit. */
export async function inFlight(limit: string): Promise<number> {
  const metric = await resilienceRegistry.getSingleMetric('sluice_concurrency_in_flight')?.get();
  return metric?.values.find((value) => value.labels.limit === limit)?.value ?? 0;
}

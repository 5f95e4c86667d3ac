// The client side of the fresh-key flood (bench/fresh-keys.ts), in its own
// process like real clients: `clients` keep-alive connections, each sending
// POST /orders one after another, every request with an API key never used
// before. Reports the status counts and each 429's retry hint to the parent.
import { Pool } from 'undici';

interface Job {
  url: string;
  requests: number;
  clients: number;
}

const job = JSON.parse(process.argv[2]!) as Job;
const pool = new Pool(job.url, { connections: job.clients, pipelining: 1 });
const statuses: Record<number, number> = {};
const refusals: string[] = [];
let next = 0;

async function client(): Promise<void> {
  for (let n = next++; n < job.requests; n = next++) {
    const response = await pool.request({ method: 'POST', path: '/orders', headers: { 'x-api-key': `fresh-${process.pid}-${n}` } });
    statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1;
    const body = await response.body.text();
    if (response.statusCode === 429 && refusals.length < 5) refusals.push(body.slice(0, 200));
  }
}

const started = performance.now();
await Promise.all(Array.from({ length: job.clients }, client));
const elapsedMs = performance.now() - started;
await pool.close();
process.send!({ statuses, refusals, elapsedMs });

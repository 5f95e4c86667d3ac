// A plain ESM script: createLimiter over createEngine's Redis engine, a few
// decisions, close(), and nothing else keeps the process alive.
import { createEngine, createLimiter } from 'sluice';

const limiter = createLimiter({ id: 'api', policy: 'token_bucket', capacity: 2, refillPerSecond: 0.001 }, createEngine({ redis: { url: process.argv[2] }, deadlineMs: 200 })); // every decision from Redis, even on a loaded machine
const decisions = [];
for (const key of ['user-42', 'user-42', 'user-42', 'org:42']) decisions.push(await limiter.consume(key));
await limiter.close();
process.stdout.write(`${JSON.stringify(decisions.map((d) => [d.allowed, d.source]))}\n`);

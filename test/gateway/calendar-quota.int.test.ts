// examples/monthly-quota.yaml through the real gateway over HTTP: each
// tenant's calendar quota turns at local midnight of its own zone and billing
// day, and Retry-After and X-RateLimit-Reset say the real time until it turns.
// On memory with a clock set beside a month's end (the exact seconds are
// known); on a real redis-server, where Redis's TIME decides.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type RunningSluice, startSluice } from '../../src/app.js';
import { loadConfig } from '../../src/decision-service/load-config.js';
import { calendarWindowAt } from '../../src/core/calendar.js';
import { MemoryStore } from '../../src/stores/memory-store.js';
import { freePort } from '../helpers/ports.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { call, silent } from '../helpers/gateway-support.js';

const EXAMPLE = 'examples/monthly-quota.yaml';

async function serve(env: Record<string, string>, store?: MemoryStore): Promise<RunningSluice> {
  const port = await freePort();
  const config = loadConfig(EXAMPLE, { SLUICE_LISTEN: '127.0.0.1:0', UPSTREAM_URL: `http://127.0.0.1:${port}`, ...env });
  return startSluice(config, { demoUpstream: { port }, logger: silent, ...(store ? { store } : {}) });
}

const ask = (url: string, key: string) => call(`${url}/api/reports`, { headers: { 'X-Api-Key': key } });

async function spend(url: string, key: string, times: number) {
  const replies = [];
  for (let i = 0; i < times; i++) replies.push(await ask(url, key));
  return replies;
}

describe(`${EXAMPLE} on memory, by a set clock`, () => {
  let now = 0;
  let app: RunningSluice;
  before(async () => {
    app = await serve({}, new MemoryStore({ now: () => now }));
  });
  after(() => app?.close());

  it('acme (Europe/Paris, the 1st): refused at 23:59 on 31 March for 60 s, then a new month of 30 days', async () => {
    now = Date.parse('2026-03-31T21:59:00Z'); // 23:59 CEST
    const replies = await spend(app.url, 'acme-demo-key', 6);
    assert.deepEqual(replies.map((r) => r.status), [200, 200, 200, 200, 200, 429]);
    assert.equal(replies[0]!.headers['x-ratelimit-reset'], '60');
    assert.equal(replies[5]!.headers['retry-after'], '60');
    assert.equal(replies[5]!.headers['x-ratelimit-remaining'], '0');
    now = Date.parse('2026-03-31T22:00:00Z'); // 1 April 00:00 CEST
    const next = await ask(app.url, 'acme-demo-key');
    assert.equal(next.status, 200);
    assert.equal(next.headers['x-ratelimit-remaining'], '4');
    assert.equal(next.headers['x-ratelimit-reset'], String(30 * 86_400), 'April: 30 days to 1 May 00:00 CEST');
  });

  it('globex (America/New_York, billing day 31): the cycle turns on 30 April, then runs to 31 May', async () => {
    now = Date.parse('2026-04-30T03:59:30Z'); // 29 April 23:59:30 EDT
    const replies = await spend(app.url, 'globex-demo-key', 4);
    assert.deepEqual(replies.map((r) => r.status), [200, 200, 200, 429]);
    assert.equal(replies[3]!.headers['retry-after'], '30');
    now = Date.parse('2026-04-30T04:00:00Z');
    const next = await ask(app.url, 'globex-demo-key');
    assert.equal(next.status, 200);
    assert.equal(next.headers['x-ratelimit-reset'], String(31 * 86_400), '30 April to 31 May');
  });

  it('initech (Asia/Tokyo, weeks from Monday): Sunday 23:59:59 local is one second from the turn', async () => {
    now = Date.parse('2026-12-06T14:59:59Z'); // Sunday 6 December 23:59:59 JST
    const replies = await spend(app.url, 'initech-demo-key', 3);
    assert.deepEqual(replies.map((r) => r.status), [200, 200, 429]);
    assert.equal(replies[2]!.headers['retry-after'], '1');
  });
});

describe(`${EXAMPLE} on Redis, by Redis TIME`, () => {
  let redis: RedisServer;
  let app: RunningSluice;
  before(async () => {
    redis = await startRedis();
    app = await serve({ SLUICE_REDIS_URL: redis.url });
  });
  after(async () => {
    await app?.close();
    await redis?.stop();
  });

  it('acme: 5 then 429, with Retry-After and X-RateLimit-Reset the seconds until the 1st at 00:00 in Paris', async () => {
    const replies = await spend(app.url, 'acme-demo-key', 6);
    assert.deepEqual(replies.map((r) => r.status), [200, 200, 200, 200, 200, 429]);
    const untilTurn = (calendarWindowAt(Date.now(), { unit: 'month', timeZone: 'Europe/Paris' }).end - Date.now()) / 1000;
    for (const [name, value] of [
      ['retry-after', replies[5]!.headers['retry-after']],
      ['x-ratelimit-reset', replies[4]!.headers['x-ratelimit-reset']],
    ] as const) {
      assert.ok(Math.abs(Number(value) - untilTurn) <= 2, `${name} ${value} vs ${untilTurn} s to the 1st in Paris`);
    }
    const client = redis.client();
    const ttl = await client.pttl('rl:{acme}').finally(() => client.disconnect());
    assert.ok(ttl > 0 && Math.abs(ttl / 1000 - untilTurn) <= 2, `the tenant's hash lives until the turn (${ttl} ms)`);
  });
});

// The Envoy face's MONTH and YEAR with `decisionService.calendarUnits`: the
// window turns on the 1st at local midnight of the configured zone, so
// duration_until_reset and Retry-After are the real time to that moment (on
// Redis, by Redis TIME); without the option they keep the reference's 30 and
// 365 days. Checked on the loader too, and a bad zone refused by name.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { calendarWindowAt } from '../../src/core/calendar.js';
import { parseEnvoyConfig } from '../../src/decision-service/envoy-config.js';
import { findLimit } from '../../src/decision-service/descriptor-tree.js';
import { parseConfig } from '../../src/decision-service/load-config.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { descriptor, EXAMPLES, type RlsClient, rlsClient, startDecisionSluice } from '../helpers/decision-service-support.js';

const DOMAIN = `
domain: quota
descriptors:
  - { key: plan, value: monthly, rate_limit: { unit: month, requests_per_unit: 2 } }
  - { key: plan, value: yearly, rate_limit: { unit: year, requests_per_unit: 1 } }
  - { key: plan, value: daily, rate_limit: { unit: day, requests_per_unit: 1 } }
  - { key: plan, value: closed, rate_limit: { unit: year, requests_per_unit: 0 } }
  - key: plan
    value: explicit
    rate_limit: { unit: month, requests_per_unit: 1 }
    sluice: { policy: fixed_window, limit: 1, windowMs: 60000 }
`;

const yamlFor = (redisUrl: string, file: string, calendarUnits: string) => `
routes:
  - { id: r, path: /r, upstream: 'http://127.0.0.1:9' }
store: { url: ${redisUrl}, deadlineMs: 2000 }
decisionService:
  envoyConfig: ${JSON.stringify(file)}
${calendarUnits}
`;

describe('calendarUnits on the loader', () => {
  const limitOf = (value: string, calendarUnits?: { timeZone: string }) =>
    findLimit(parseEnvoyConfig(DOMAIN, 'rl.yaml', undefined, calendarUnits).level, [{ key: 'plan', value }])!;

  it('MONTH and YEAR follow the calendar of the zone; DAY and an explicit sluice: rule stay as they are', () => {
    const zone = { timeZone: 'Europe/Paris' };
    assert.deepEqual(limitOf('monthly', zone).rules, [{ policy: 'fixed_window', limit: 2, calendar: { unit: 'month', timeZone: 'Europe/Paris' } }]);
    assert.deepEqual(limitOf('yearly', zone).rules, [{ policy: 'fixed_window', limit: 1, calendar: { unit: 'year', timeZone: 'Europe/Paris' } }]);
    assert.deepEqual(limitOf('daily', zone).rules, [{ policy: 'fixed_window', limit: 1, windowMs: 86_400_000 }]);
    assert.deepEqual(limitOf('explicit', zone).rules, [{ policy: 'fixed_window', limit: 1, windowMs: 60_000 }]);
  });

  it("by default MONTH is the reference's 30 days and YEAR its 365", () => {
    assert.deepEqual(limitOf('monthly').rules, [{ policy: 'fixed_window', limit: 2, windowMs: 30 * 86_400_000 }]);
    assert.deepEqual(limitOf('yearly').rules, [{ policy: 'fixed_window', limit: 1, windowMs: 365 * 86_400_000 }]);
  });

  it('an unknown time zone is refused naming the field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-calendar-units-'));
    try {
      writeFileSync(join(dir, 'rl.yaml'), DOMAIN);
      assert.throws(
        () => parseConfig(yamlFor('redis://127.0.0.1:1', join(dir, 'rl.yaml'), '  calendarUnits: { timeZone: Mars/Olympus }'), { source: 'sluice.yaml', baseDir: EXAMPLES, env: {} }),
        (error: Error) => /decisionService\.calendarUnits\.timeZone/.test(error.message) && /unknown time zone/.test(error.message),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('calendarUnits on the gRPC face, on Redis', () => {
  let redis: RedisServer;
  let sluice: RunningSluice;
  let client: RlsClient;
  let dir: string;
  before(async () => {
    redis = await startRedis();
    dir = mkdtempSync(join(tmpdir(), 'sluice-calendar-units-'));
    writeFileSync(join(dir, 'rl.yaml'), DOMAIN);
    sluice = await startDecisionSluice(yamlFor(redis.url, join(dir, 'rl.yaml'), '  calendarUnits: { timeZone: America/New_York }'));
    client = rlsClient(sluice.grpcAddress!);
  });
  after(async () => {
    client?.close();
    await sluice?.close();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('MONTH resets on the 1st at midnight in New York: duration_until_reset and Retry-After say so', async () => {
    const ask = () => client.ask({ domain: 'quota', descriptors: [descriptor(['plan', 'monthly'])] });
    const answers = [await ask(), await ask(), await ask()];
    assert.deepEqual(answers.map((answer) => answer.overall_code), ['OK', 'OK', 'OVER_LIMIT']);
    assert.deepEqual(answers[2].statuses[0].current_limit, { requests_per_unit: 2, unit: 'MONTH' }, 'Envoy is still told MONTH');
    const { end } = calendarWindowAt(Date.now(), { unit: 'month', timeZone: 'America/New_York' });
    const untilTurn = (end - Date.now()) / 1000;
    const seconds = Number(answers[2].statuses[0].duration_until_reset.seconds);
    assert.ok(Math.abs(seconds - untilTurn) <= 2, `duration_until_reset ${seconds} s vs ${untilTurn} s to the 1st in New York`);
    const headers = Object.fromEntries(answers[2].response_headers_to_add.map((h: { key: string; value: string }) => [h.key, h.value]));
    assert.ok(Math.abs(Number(headers['Retry-After']) - untilTurn) <= 2, `Retry-After ${headers['Retry-After']}`);
  });

  it('a blocked YEAR (requests_per_unit 0) is refused until 1 January at midnight in New York', async () => {
    const answer = await client.ask({ domain: 'quota', descriptors: [descriptor(['plan', 'closed'])] });
    assert.equal(answer.overall_code, 'OVER_LIMIT');
    const { end } = calendarWindowAt(Date.now(), { unit: 'year', timeZone: 'America/New_York' });
    const seconds = Number(answer.statuses[0].duration_until_reset.seconds);
    assert.ok(Math.abs(seconds - (end - Date.now()) / 1000) <= 2, `duration_until_reset ${seconds} s vs ${(end - Date.now()) / 1000} s`);
  });
});

// The answers of envoyproxy/ratelimit's integration and service tests
// (test/integration/integration_test.go, test/service/ratelimit_test.go) and of
// its README's examples, asked over gRPC by a client built from Envoy's
// .proto files, on the memory store and on real Redis. Where Sluice differs
// by default the reference offers the same as a setting: a refused request
// charges no other descriptor (its STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { parseConfig } from '../../src/decision-service/load-config.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { BASIC_CASES, WILDCARD_CASES } from './reference/cases.js';
import { README_LOOKUPS, writeReferenceConfigs } from './reference/configs.js';
import { descriptor, EXAMPLES, type RlsAnswer, type RlsClient, rlsClient, startDecisionSluice } from '../helpers/decision-service-support.js';

const MAX_UINT32 = 4294967295;
const unique = () => randomUUID().slice(0, 8);
const codes = (answer: RlsAnswer) => answer.statuses.map((status: { code: string }) => status.code);
const remaining = (answer: RlsAnswer) => answer.statuses.map((status: { limit_remaining?: number }) => status.limit_remaining ?? 0);
const headersOf = (answer: RlsAnswer): Record<string, string> => Object.fromEntries((answer.response_headers_to_add ?? []).map((h: { key: string; value: string }) => [h.key, h.value]));
const resetSeconds = (status: { duration_until_reset?: { seconds: number | string } }) => Number(status.duration_until_reset?.seconds ?? -1);

function referenceSuite(store: 'memory' | 'redis'): void {
  describe(`reference answers over gRPC (${store} store)`, () => {
    let redis: RedisServer | undefined;
    let sluice: RunningSluice;
    let client: RlsClient;
    let dir: string;
    let yaml: string;
    const ask = (domain: string, descriptors: unknown[], extra: object = {}) => client.ask({ domain, descriptors, ...extra });
    before(async () => {
      dir = writeReferenceConfigs();
      if (store === 'redis') redis = await startRedis();
      const storeYaml = redis ? `store: { url: ${redis.url}, deadlineMs: 2000 }\n` : '';
      yaml = `routes: [{ id: r, path: /r, upstream: 'http://127.0.0.1:9' }]\n${storeYaml}decisionService:\n  envoyConfig: ${JSON.stringify(dir)}\n`;
      sluice = await startDecisionSluice(yaml);
      client = rlsClient(sluice.grpcAddress!);
    });
    after(async () => {
      client?.close();
      await sluice?.close();
      await redis?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('an unknown domain: OK, no limit', async () => {
      assert.deepEqual(await ask('foo', [descriptor(['hello', 'world'])]), { overall_code: 'OK', statuses: [{ code: 'OK' }] });
    });

    it("the config tests' lookups: the limit each descriptor lands on, or none", async () => {
      for (const [name, pairs, want] of BASIC_CASES) {
        const status = (await ask('config-basic', [descriptor(...pairs)])).statuses[0];
        if (want === undefined) assert.deepEqual(status, { code: 'OK' }, name);
        else if (want.unlimited) assert.deepEqual(status, { code: 'OK', limit_remaining: MAX_UINT32 }, name);
        else assert.deepEqual(status.current_limit, { requests_per_unit: want.rpu, unit: want.unit.toUpperCase(), ...(want.name ? { name: want.name } : {}) }, name);
      }
      for (const [pairs, want] of WILDCARD_CASES) {
        const status = (await ask('wild', [descriptor(...pairs)])).statuses[0];
        assert.equal(status.current_limit?.requests_per_unit, want, JSON.stringify(pairs));
      }
    });

    it('the README blocks load and land where the README says', async () => {
      for (const [domain, pairs, want] of README_LOOKUPS) {
        const status = (await ask(domain, [descriptor(...pairs)])).statuses[0];
        if (want === 'unlimited') assert.deepEqual(status, { code: 'OK', limit_remaining: MAX_UINT32 });
        else assert.equal(status.current_limit?.requests_per_unit, want, `${domain} ${JSON.stringify(pairs)}`);
      }
    });

    it('a file added to the directory applies on a reload (the reference\'s reload test)', async () => {
      assert.deepEqual((await ask('reload', [descriptor(['block', 'foo'])])).statuses, [{ code: 'OK' }], 'no such domain yet');
      writeFileSync(join(dir, 'reload.yaml'), 'domain: reload\ndescriptors:\n  - key: key1\n    rate_limit: { unit: day, requests_per_unit: 50 }\n  - key: block\n    rate_limit: { unit: second, requests_per_unit: 0 }\n');
      sluice.reconfigure(parseConfig(yaml, { source: 'test.yaml', baseDir: EXAMPLES, env: { SLUICE_LISTEN: '127.0.0.1:0', SLUICE_GRPC_LISTEN: '127.0.0.1:0' } }));
      assert.deepEqual(remaining(await ask('reload', [descriptor(['key1', unique()])])), [49]);
      assert.equal((await ask('reload', [descriptor(['block', 'foo'])])).overall_code, 'OVER_LIMIT');
    });

    it('one limit: OK with current_limit, remaining and reset', async () => {
      const answer = await ask('basic', [descriptor(['key1', unique()])]);
      assert.equal(answer.overall_code, 'OK');
      assert.deepEqual(answer.statuses[0].current_limit, { requests_per_unit: 50, unit: 'SECOND' });
      assert.equal(answer.statuses[0].limit_remaining, 49);
      assert.ok(resetSeconds(answer.statuses[0]) >= 0);
    });

    it('25 requests on 20: remaining counts down, then OVER_LIMIT with 0 remaining and a reset', async () => {
      const value = unique();
      for (let i = 0; i < 25; i++) {
        const answer = await ask('another', [descriptor(['key2', value])]);
        const over = i >= 20;
        assert.equal(answer.overall_code, over ? 'OVER_LIMIT' : 'OK', `request ${i}`);
        assert.deepEqual(remaining(answer), [over ? 0 : 20 - (i + 1)]);
        assert.ok(resetSeconds(answer.statuses[0]) >= 1);
      }
    });

    it('two descriptors: the one that did not refuse tells its real remaining and reset; a refused request charges it nothing', async () => {
      const value = unique();
      for (let i = 0; i < 15; i++) {
        const answer = await ask('another', [descriptor(['key2', value]), descriptor(['key3', value])]);
        const over = i >= 10;
        assert.equal(answer.overall_code, over ? 'OVER_LIMIT' : 'OK', `request ${i}`);
        assert.deepEqual(codes(answer), ['OK', over ? 'OVER_LIMIT' : 'OK']);
        assert.deepEqual(remaining(answer), over ? [10, 0] : [20 - (i + 1), 10 - (i + 1)], `request ${i}`);
        assert.deepEqual(answer.statuses[0].current_limit, { requests_per_unit: 20, unit: 'DAY' });
        assert.ok(resetSeconds(answer.statuses[0]) >= 1, 'the uncharged descriptor still has its reset');
        assert.ok(resetSeconds(answer.statuses[1]) >= 1);
      }
    });

    it('share_threshold: every value the wildcard matches shares one bucket; without it each value has its own', async () => {
      for (let i = 0; i < 10; i++) assert.equal((await ask('share-threshold-test', [descriptor(['files', `files/${i}.pdf`])])).overall_code, 'OK');
      const shared = await ask('share-threshold-test', [descriptor(['files', 'files/b.csv'])]);
      assert.equal(shared.overall_code, 'OVER_LIMIT');
      assert.deepEqual(remaining(shared), [0]);
      for (let i = 0; i < 3; i++) assert.deepEqual(remaining(await ask('share-threshold-test', [descriptor(['files_no_share', `files_no_share/${unique()}`])])), [9]);
    });

    it('unlimited: OK, no current_limit, MaxUint32 remaining, beside a limited and an unknown descriptor', async () => {
      const answer = await ask('rl', [descriptor(['unspec', unique()]), descriptor(['nope', 'x']), descriptor(['foo', 'a'], ['bay', 'b'])]);
      assert.equal(answer.overall_code, 'OK');
      assert.deepEqual(answer.statuses[1], { code: 'OK' });
      assert.deepEqual(answer.statuses[2], { code: 'OK', limit_remaining: MAX_UINT32 });
      assert.equal(answer.statuses[0].limit_remaining, 1);
    });

    it('requests_per_unit 0: OVER_LIMIT (never an error), with its reset and headers, and the other descriptor is not charged', async () => {
      const value = unique();
      for (let i = 0; i < 2; i++) {
        const answer = await ask('rl', [descriptor(['foo', 'x'], ['bar', 'banned']), descriptor(['unspec', value])]);
        assert.equal(answer.overall_code, 'OVER_LIMIT');
        assert.deepEqual(codes(answer), ['OVER_LIMIT', 'OK']);
        assert.deepEqual(answer.statuses[0].current_limit, { name: 'banned_limit', requests_per_unit: 0, unit: 'DAY' });
        assert.ok(resetSeconds(answer.statuses[0]) >= 1);
        assert.deepEqual(remaining(answer), [0, 2], 'unspec is looked at, never counted');
        assert.equal(headersOf(answer)['X-RateLimit-Limit'], '0');
        assert.match(headersOf(answer)['Retry-After']!, /^\d+$/);
      }
      const readme = await ask('readme', [descriptor(['remote_address', '50.0.0.5'])]);
      assert.equal(readme.overall_code, 'OVER_LIMIT', 'README example 3: the blocked address');
      assert.equal((await ask('readme', [descriptor(['remote_address', '50.0.0.1'])])).statuses[0].limit_remaining, 9);
    });

    it('an override of 0 (Envoy’s limit) is OVER_LIMIT, not an error; WEEK is a unit', async () => {
      const blocked = await ask('rl', [{ ...descriptor(['x', unique()]), limit: { requests_per_unit: 0, unit: 'SECOND' } }]);
      assert.equal(blocked.overall_code, 'OVER_LIMIT');
      const weekly = await ask('rl', [{ ...descriptor(['x', unique()]), limit: { requests_per_unit: 2, unit: 'WEEK' } }]);
      assert.deepEqual(weekly.statuses[0].current_limit, { requests_per_unit: 2, unit: 'WEEK' });
      assert.equal(weekly.statuses[0].limit_remaining, 1);
      const configured = await ask('readme', [descriptor(['weekly', unique()])]);
      assert.deepEqual(configured.statuses[0].current_limit, { requests_per_unit: 3, unit: 'WEEK' });
    });

    it('replaces (inside rate_limit): the replaced limit is not applied; alone it is', async () => {
      const both = await ask('rl', [descriptor(['category', 'account']), descriptor(['foo', 'f'], ['bar', 'bkthomps']), descriptor(['source_cluster', 'proxy'], ['destination_cluster', 'fake'])]);
      assert.equal(both.statuses[0].current_limit.requests_per_unit, 4);
      assert.deepEqual(both.statuses.slice(1), [{ code: 'OK' }, { code: 'OK' }], 'bkthomps and fake_name are replaced');
      const alone = await ask('rl', [descriptor(['foo', 'f'], ['bar', 'bkthomps'])]);
      assert.equal(alone.statuses[0].current_limit.name, 'bkthomps');
      const example7 = await ask('readme', [descriptor(['key_1', 'value_1'], ['user', 'bkthomps']), descriptor(['key_2', 'value_2'], ['user', 'bkthomps'])]);
      assert.deepEqual(example7.statuses[0], { code: 'OK' });
      assert.equal(example7.statuses[1].current_limit.requests_per_unit, 10);
    });

    it('shadow_mode: counted, answered OK, its remaining reaching 0', async () => {
      const answers = [];
      const value = unique();
      for (let i = 0; i < 3; i++) answers.push(await ask('rl', [descriptor(['foo', value], ['baz', 'shady'])]));
      assert.deepEqual(answers.map((answer) => answer.overall_code), ['OK', 'OK', 'OK']);
      assert.deepEqual(answers.flatMap(remaining), [1, 0, 0]);
    });

    it('quota_mode: over alone it does not refuse; every quota descriptor over refuses', async () => {
      assert.equal((await ask('rl', [descriptor(['service', 'service_1'])])).overall_code, 'OK');
      const one = await ask('rl', [descriptor(['service', 'service_1']), descriptor(['service', 'service_2'])]);
      assert.deepEqual([one.overall_code, ...codes(one)], ['OK', 'OVER_LIMIT', 'OK']);
      assert.deepEqual(remaining(one), [0, 1], 'service_2 was counted');
      const all = await ask('rl', [descriptor(['service', 'service_1']), descriptor(['service', 'service_2'])]);
      assert.deepEqual([all.overall_code, ...codes(all)], ['OK', 'OVER_LIMIT', 'OK'], 'service_2 takes its last');
      const none = await ask('rl', [descriptor(['service', 'service_1']), descriptor(['service', 'service_2'])]);
      assert.deepEqual([none.overall_code, ...codes(none)], ['OVER_LIMIT', 'OVER_LIMIT', 'OVER_LIMIT']);
      const value = unique();
      const withOther = await ask('rl', [descriptor(['unspec', value]), descriptor(['service', 'service_1']), descriptor(['service', 'service_2'])]);
      assert.deepEqual([withOther.overall_code, ...codes(withOther)], ['OVER_LIMIT', 'OK', 'OVER_LIMIT', 'OVER_LIMIT']);
      assert.deepEqual(remaining(await ask('rl', [descriptor(['unspec', value])])), [0], 'every quota descriptor over: refused, and the others were counted');
    });

    it("hits_addend: a descriptor's own 0 checks without counting; the request's 0 counts 1", async () => {
      const value = unique();
      const check = { ...descriptor(['one_per_day', value]), hits_addend: { value: 0 } };
      for (let i = 0; i < 2; i++) assert.deepEqual([...codes(await ask('basic', [check])), ...remaining(await ask('basic', [check]))], ['OK', 1]);
      assert.deepEqual(remaining(await ask('basic', [descriptor(['one_per_day', value])], { hits_addend: 0 })), [0]);
      const after = await ask('basic', [check]);
      assert.deepEqual([after.overall_code, ...remaining(after)], ['OK', 0], 'a check is never refused');
    });

    it('more hits than the limit holds: OVER_LIMIT with its reset and the headers, nothing drained', async () => {
      const value = unique();
      const answer = await ask('another', [descriptor(['key2', value])], { hits_addend: 21 });
      assert.equal(answer.overall_code, 'OVER_LIMIT');
      assert.ok(resetSeconds(answer.statuses[0]) >= 1);
      assert.equal(headersOf(answer)['X-RateLimit-Limit'], '20');
      assert.match(headersOf(answer)['Retry-After']!, /^\d+$/);
      assert.deepEqual(remaining(await ask('another', [descriptor(['key2', value])])), [19]);
      const huge = await ask('another', [{ ...descriptor(['key2', value]), hits_addend: { value: 5_000_000_000 } }]);
      assert.equal(huge.overall_code, 'OVER_LIMIT', 'a uint64 count is refused, not an error');
    });

    it('empty values match the key-only node; a descriptor with no entries is OK with no limit', async () => {
      const answer = await ask('readme', [{ entries: [{ key: 'user', value: '' }] }, { entries: [] }]);
      assert.deepEqual(answer.statuses[0].current_limit, { requests_per_unit: 4, unit: 'DAY' });
      assert.deepEqual(answer.statuses[1], { code: 'OK' });
    });

    it('README examples: nested and flat descriptors together, depth must match, a wildcard in the middle', async () => {
      const number = unique();
      const marketing = await ask('readme', [descriptor(['message_type', 'marketing'], ['to_number', number]), descriptor(['to_number', number])]);
      assert.deepEqual(marketing.statuses.map((status: { current_limit: { requests_per_unit: number } }) => status.current_limit.requests_per_unit), [5, 100]);
      assert.deepEqual(remaining(marketing), [4, 99]);
      assert.deepEqual((await ask('readme', [descriptor(['key', 'value'], ['subkey', 'subvalue'])])).statuses, [{ code: 'OK' }], 'example 4');
      assert.equal((await ask('readme', [descriptor(['path', '/api/123/action'])])).statuses[0].current_limit.requests_per_unit, 20);
      assert.deepEqual((await ask('readme', [descriptor(['path', '/api/123/other'])])).statuses, [{ code: 'OK' }]);
    });
  });
}

referenceSuite('memory');
referenceSuite('redis');

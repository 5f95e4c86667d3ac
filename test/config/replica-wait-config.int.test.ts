// store.wait and its SLUICE_REDIS_WAIT_* variables: the engine's replicaWait,
// refused where it cannot work (a Cluster, the memory store, a timeout the
// deadline would cut short), each refusal naming its field.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Env } from '../../src/config/index.js';
import { parseConfig } from '../../src/decision-service/load-config.js';
import { createEngine } from '../../src/engine-factory/create-engine.js';
import { ROUTES } from '../helpers/connections.js';

const parse = (yaml: string, env: Env = {}) => parseConfig(`${ROUTES}${yaml}`, { source: 'sluice.yaml', baseDir: '.', env });

describe('store.wait', () => {
  it('goes to the engine as replicaWait, from the file or from SLUICE_REDIS_WAIT_REPLICAS / SLUICE_REDIS_WAIT_TIMEOUT_MS', () => {
    const fromFile = parse('store:\n  url: redis://10.0.0.5:6379\n  deadlineMs: 20\n  wait: { replicas: 1, timeoutMs: 10 }\n');
    assert.deepEqual(fromFile.resilience.replicaWait, { replicas: 1, timeoutMs: 10 });
    const fromEnv = parse('store:\n  url: redis://10.0.0.5:6379\n  deadlineMs: 20\n', { SLUICE_REDIS_WAIT_REPLICAS: '2', SLUICE_REDIS_WAIT_TIMEOUT_MS: '15' });
    assert.deepEqual(fromEnv.store.wait, { replicas: 2, timeoutMs: 15 });
    assert.deepEqual(fromEnv.resilience.replicaWait, { replicas: 2, timeoutMs: 15 });
    assert.equal(parse('store:\n  url: redis://10.0.0.5:6379\n').resilience.replicaWait, undefined, 'off unless asked for');
  });

  it('is refused on a Cluster, on the memory store and with a timeout not below the deadline', () => {
    assert.throws(() => parse('store:\n  cluster: [10.0.0.5:7000]\n  wait: { replicas: 1, timeoutMs: 2 }\n'), /store\.wait.*not supported on Redis Cluster/s);
    assert.throws(() => parse('store:\n  wait: { replicas: 1, timeoutMs: 2 }\n'), /store\.wait.*is for a Redis store/s);
    assert.throws(() => parse('store:\n  url: redis://10.0.0.5:6379\n  deadlineMs: 20\n  wait: { replicas: 1, timeoutMs: 20 }\n'), /store\.wait\.timeoutMs.*must be below store\.deadlineMs \(20\)/s);
    assert.throws(() => parse('store:\n  url: redis://10.0.0.5:6379\n  wait: { replicas: 1, timeoutMs: 50 }\n'), /store\.wait\.timeoutMs.*must be below the adaptive deadline’s ceiling \(50\)/s);
    assert.throws(() => parse('store:\n  url: redis://10.0.0.5:6379\n', { SLUICE_REDIS_WAIT_REPLICAS: 'one', SLUICE_REDIS_WAIT_TIMEOUT_MS: '2' }), /SLUICE_REDIS_WAIT_REPLICAS/);
  });

  it('createEngine checks the same timeout against its deadline', () => {
    assert.throws(() => createEngine({ redis: { url: 'redis://127.0.0.1:1' }, deadlineMs: 10, replicaWait: { replicas: 1, timeoutMs: 10 } }), /replicaWait\.timeoutMs.*must be below deadlineMs/s);
  });
});

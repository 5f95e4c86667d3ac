// The plans kept of the descriptors seen lately: a repeated descriptor is
// planned once and answered alike, random values never keep more than the
// bound, and a plan kept is the same as a fresh one (replaces still applied).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadEnvoyConfig } from '../../src/decision/envoy-config.js';
import { planRequest, plansKept, RECENT_PLANS } from '../../src/decision/rls-plan.js';
import { checkRequest } from '../../src/decision/rls-request.js';
import { EXAMPLES } from './support.js';

const request = (domain: string, ...pairs: [string, string][]) => checkRequest({ domain, descriptors: [{ entries: pairs.map(([key, value]) => ({ key, value })) }] });

describe('the plans of recent descriptors', () => {
  it('a repeated descriptor gets the same plan; random values keep at most the bound', () => {
    const domains = loadEnvoyConfig([join(EXAMPLES, 'ratelimit-config.yaml')]);
    const first = planRequest(domains, request('shop', ['api_key', 'k']));
    assert.equal(typeof first[0], 'object', 'api_key has a limit in shop');
    assert.equal(planRequest(domains, request('shop', ['api_key', 'k']))[0], first[0], 'the plan kept is reused');
    for (let i = 0; i < RECENT_PLANS + 500; i++) planRequest(domains, request('shop', ['api_key', `random-${i}`]));
    assert.equal(plansKept(domains), RECENT_PLANS);
    const again = planRequest(domains, request('shop', ['api_key', 'k']));
    assert.notEqual(again[0], first[0], 'evicted by the random values');
    assert.equal(JSON.stringify(again), JSON.stringify(first), 'planned afresh, the same plan');
    assert.equal(plansKept(loadEnvoyConfig([join(EXAMPLES, 'ratelimit-config.yaml')])), 0, 'a config loaded anew starts empty');
  });
});

// The plans kept of the descriptors seen lately: a repeated descriptor is
// planned once and answered alike, random values never keep more than the
// bound, and a plan kept is the same as a fresh one (replaces still applied).
// The gRPC face's request plans, kept by the message's bytes: the same bound,
// long messages and messages that cannot be decided never kept.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import protobuf from 'protobufjs';
import { loadEnvoyConfig } from '../../src/decision-service/envoy-config.js';
import { planRequest, plansKept, RECENT_PLANS } from '../../src/decision-service/rls-plan.js';
import { decodeRequest } from '../../src/decision-service/grpc-codec.js';
import { GrpcError } from '../../src/decision-service/grpc-wire.js';
import { checkRequest, RlsServiceError } from '../../src/decision-service/rls-request.js';
import { MAX_KEPT_MESSAGE_BYTES, RECENT_REQUESTS, RequestPlans } from '../../src/decision-service/rls-request-plan.js';
import { PROTO_DIR } from '../../src/decision-service/proto-files.js';
import { EXAMPLES } from '../helpers/decision-service-support.js';

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

const root = new protobuf.Root();
root.resolvePath = (_origin, target) => `${PROTO_DIR}/${target}`;
root.loadSync('envoy/service/ratelimit/v3/rls.proto', { keepCase: true });
const RequestType = root.lookupType('envoy.service.ratelimit.v3.RateLimitRequest');
/** A RateLimitRequest's bytes: domain `shop`, one descriptor api_key=`key`. */
const message = (key: string) => Buffer.from(RequestType.encode(RequestType.fromObject({ domain: 'shop', descriptors: [{ entries: [{ key: 'api_key', value: key }] }] })).finish());

describe('the request plans of the gRPC face', () => {
  it('the same bytes get the same plan, decoded once; random requests keep at most the bound', () => {
    const domains = loadEnvoyConfig([join(EXAMPLES, 'ratelimit-config.yaml')]);
    const plans = new RequestPlans(domains);
    let decoded = 0;
    const decode = (bytes: Uint8Array) => {
      decoded++;
      return decodeRequest(bytes);
    };
    const first = plans.ofMessage(message('k'), decode);
    assert.equal(typeof first.plans[0], 'object', 'api_key has a limit in shop');
    assert.equal(plans.ofMessage(message('k'), decode), first, 'kept');
    assert.equal(decoded, 1, 'decoded once');
    assert.equal(JSON.stringify(first), JSON.stringify(plans.of(decodeRequest(message('k')))), 'the plan of the decoded request');
    for (let i = 0; i < RECENT_REQUESTS + 100; i++) plans.ofMessage(message(`random-${i}`), decode);
    assert.equal(plans.size, RECENT_REQUESTS);
    assert.notEqual(plans.ofMessage(message('k'), decode), first, 'evicted by the random requests');
  });

  it('a message longer than the bound is planned every time, one that cannot be decided throws every time', () => {
    const plans = new RequestPlans(loadEnvoyConfig([join(EXAMPLES, 'ratelimit-config.yaml')]));
    const long = message('x'.repeat(MAX_KEPT_MESSAGE_BYTES));
    assert.ok(long.length > MAX_KEPT_MESSAGE_BYTES);
    assert.notEqual(plans.ofMessage(long, decodeRequest), plans.ofMessage(long, decodeRequest));
    const broken = Buffer.from('0a02726c1203', 'hex'); // a descriptor cut short
    const noDescriptors = Buffer.from('0a0473686f70', 'hex'); // domain "shop" alone
    for (let i = 0; i < 2; i++) {
      assert.throws(() => plans.ofMessage(broken, decodeRequest), GrpcError);
      assert.throws(() => plans.ofMessage(noDescriptors, decodeRequest), RlsServiceError);
    }
    assert.equal(plans.size, 0, 'nothing kept');
  });
});

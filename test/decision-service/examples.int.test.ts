// The Traefik and Envoy examples. Neither binary is on this machine, so their
// files are checked for shape against what they must agree with (Sluice's
// listeners in examples/decision/sluice.yaml, the domain and keys of
// ratelimit-config.yaml), and Envoy's calls are replayed with a gRPC client:
// the descriptor its route action builds from X-Api-Key, three times.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import type { RunningSluice } from '../../src/app.js';
import { parseConfig } from '../../src/decision-service/load-config.js';
import { findLimit } from '../../src/decision-service/descriptor-tree.js';
import { RLS_SERVICE_NAME } from '../../src/decision-service/proto-files.js';
import { descriptor, EXAMPLES, exampleSluiceYaml, type RlsClient, rlsClient, startDecisionSluice } from '../helpers/decision-service-support.js';

// biome-ignore lint/suspicious/noExplicitAny: walking parsed YAML
const load = (name: string): any => parse(readFileSync(join(EXAMPLES, name), 'utf8'));
const sluiceConfig = () => parseConfig(exampleSluiceYaml(), { baseDir: EXAMPLES });

describe('examples/decision/traefik.yaml (shape only: no Traefik binary here)', () => {
  it('a forwardAuth middleware on /decide of the decision listener, copying the limit headers, used by the router', () => {
    const traefik = load('traefik.yaml');
    const forwardAuth = traefik.http.middlewares['sluice-limit'].forwardAuth;
    const listen = sluiceConfig().decisionService.httpListen!;
    assert.equal(forwardAuth.address, `http://${listen.host}:${listen.port}/decide`);
    assert.deepEqual(forwardAuth.authResponseHeaders, ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']);
    assert.deepEqual(traefik.http.routers.orders.middlewares, ['sluice-limit']);
    assert.equal(traefik.http.routers.orders.service, 'orders');
    assert.ok(traefik.http.services.orders.loadBalancer.servers[0].url);
  });
});

describe('examples/decision/envoy.yaml (shape, then its calls replayed: no Envoy binary here)', () => {
  // biome-ignore lint/suspicious/noExplicitAny: walking parsed YAML
  let envoy: any;
  let sluice: RunningSluice;
  let client: RlsClient;
  before(async () => {
    envoy = load('envoy.yaml');
    sluice = await startDecisionSluice(exampleSluiceYaml());
    client = rlsClient(sluice.grpcAddress!);
  });
  after(async () => {
    client?.close();
    await sluice?.close();
  });

  const manager = () => envoy.static_resources.listeners[0].filter_chains[0].filters[0].typed_config;

  it('the ratelimit filter names a configured domain and the sluice_rls cluster (HTTP/2, gRPC health) at grpcListen', () => {
    const filter = manager().http_filters.find((item: { name: string }) => item.name === 'envoy.filters.http.ratelimit').typed_config;
    assert.equal(filter.rate_limit_service.transport_api_version, 'V3');
    assert.ok(sluiceConfig().decisionService.domains.has(filter.domain));
    const cluster = envoy.static_resources.clusters.find((item: { name: string }) => item.name === filter.rate_limit_service.grpc_service.envoy_grpc.cluster_name);
    const address = cluster.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address;
    assert.deepEqual({ host: address.address, port: address.port_value }, sluiceConfig().decisionService.grpcListen);
    assert.ok(cluster.typed_extension_protocol_options['envoy.extensions.upstreams.http.v3.HttpProtocolOptions'].explicit_http_config.http2_protocol_options);
    assert.equal(cluster.health_checks[0].grpc_health_check.service_name, RLS_SERVICE_NAME);
  });

  it("the route's action builds a descriptor the config limits; Envoy's three calls: OK OK OVER_LIMIT with the headers", async () => {
    const action = manager().route_config.virtual_hosts[0].routes[0].route.rate_limits[0].actions[0].request_headers;
    const shop = sluiceConfig().decisionService.domains.get('shop')!;
    assert.ok(findLimit(shop, [{ key: action.descriptor_key, value: 'shop-a-demo-key' }]));
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await client.ask({ domain: 'shop', descriptors: [descriptor([action.descriptor_key, 'shop-a-demo-key'])] }));
    assert.deepEqual(answers.map((answer) => answer.overall_code), ['OK', 'OK', 'OVER_LIMIT']);
    const keys = answers[2].response_headers_to_add.map((header: { key: string }) => header.key);
    assert.deepEqual(keys, ['Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']);
  });
});

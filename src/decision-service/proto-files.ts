// Envoy's .proto files as Sluice ships them (src/decision-service/proto, copied to
// dist/decision-service/proto by the build), loaded at runtime by @grpc/proto-loader.
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { loadSync, type Options } from '@grpc/proto-loader';

export const PROTO_DIR = fileURLToPath(new URL('./proto', import.meta.url));
export const RLS_SERVICE_NAME = 'envoy.service.ratelimit.v3.RateLimitService';

/** Field names as in the .proto, enums as names, unset fields absent, 64-bit numbers as numbers. */
export const LOADER_OPTIONS: Options = { includeDirs: [PROTO_DIR], keepCase: true, longs: Number, enums: String, defaults: false };

/** The RateLimitService definition (server side) and a client constructor (tests, bench). */
export function loadRls(): { service: grpc.ServiceDefinition; Client: grpc.ServiceClientConstructor } {
  const definition = loadSync('envoy/service/ratelimit/v3/rls.proto', LOADER_OPTIONS);
  const loaded = grpc.loadPackageDefinition(definition) as unknown as { envoy: { service: { ratelimit: { v3: { RateLimitService: grpc.ServiceClientConstructor } } } } };
  const Client = loaded.envoy.service.ratelimit.v3.RateLimitService;
  return { service: Client.service, Client };
}

export const RATE_LIMIT_CONFIG_TYPE_URL = 'type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig';

/** The xDS Aggregated Discovery Service: the client `sluice ratelimit` streams with, and the definition a test's management server serves. */
export function loadAds(): { service: grpc.ServiceDefinition; Client: grpc.ServiceClientConstructor } {
  const definition = loadSync('envoy/service/discovery/v3/ads.proto', LOADER_OPTIONS);
  const loaded = grpc.loadPackageDefinition(definition) as unknown as { envoy: { service: { discovery: { v3: { AggregatedDiscoveryService: grpc.ServiceClientConstructor } } } } };
  const Client = loaded.envoy.service.discovery.v3.AggregatedDiscoveryService;
  return { service: Client.service, Client };
}

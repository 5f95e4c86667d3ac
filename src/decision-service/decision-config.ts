// `decisionService:` in sluice.yaml, with its envoyproxy/ratelimit files loaded
// (their errors name their own file and line).
import { resolve } from 'node:path';
import { listenAddress } from '../config/listeners.js';
import type { ConfigFile } from '../config/schema.js';
import { DEFAULT_GRPC_LIMITS } from '../config/decision-service.js';
import type { DecisionServiceConfig } from '../config/types.js';
import { loadEnvoyFiles } from './envoy-config.js';

export function decisionServiceOf(file: ConfigFile, baseDir: string): DecisionServiceConfig {
  const section = file.decisionService;
  const paths = section?.envoyConfig === undefined ? [] : typeof section.envoyConfig === 'string' ? [section.envoyConfig] : section.envoyConfig;
  const envoyConfig = paths.map((path) => resolve(baseDir, path));
  const mergeDomains = section?.mergeDomains ?? false;
  const calendar = section?.calendarUnits;
  const calendarUnits = calendar === true ? { timeZone: 'UTC' } : calendar === false || calendar === undefined ? undefined : calendar;
  const { domains, warnings } = loadEnvoyFiles(envoyConfig, { mergeDomains, calendarUnits });
  return {
    grpcListen: section?.grpcListen === undefined ? undefined : listenAddress(section.grpcListen),
    httpListen: section?.httpListen === undefined ? undefined : listenAddress(section.httpListen),
    envoyConfig,
    domains,
    mergeDomains,
    shadowMode: section?.shadowMode ?? false,
    grpcTls: undefined,
    grpcUnixSocket: undefined,
    grpcConnectionAge: undefined,
    warnings,
    refusedStatus: section?.refusedStatus ?? 429,
    noRoute: section?.noRoute ?? 'deny',
    forwardAuthProxy: section?.forwardAuthProxy ?? 'nginx',
    grpcLimits: section
      ? { maxMessageBytes: section.grpcMaxMessageBytes, maxDescriptors: section.maxDescriptors, maxEntries: section.maxDescriptorEntries }
      : DEFAULT_GRPC_LIMITS,
  };
}

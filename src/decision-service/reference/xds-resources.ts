// RateLimitConfig resources from an xDS server → domains, through the very
// checks a config file goes through (each resource is laid out as the file
// it stands for, named `xds:<name>` in errors). proto3 leaves unset fields
// at their defaults: an empty value is no value, UNKNOWN is no unit.
import protobuf from 'protobufjs';
import { stringify } from 'yaml';
import { ConfigError } from '../../config/config-error.js';
import type { DescriptorLevel, Domains } from '../descriptor-tree.js';
import { parseEnvoyConfig } from '../envoy-config.js';
import { PROTO_DIR } from '../proto-files.js';

const root = new protobuf.Root();
root.resolvePath = (_origin, target) => (target.startsWith('/') ? target : `${PROTO_DIR}/${target}`);
root.loadSync('ratelimit/config/ratelimit/v3/rls_conf.proto', { keepCase: true });
const RateLimitConfigType = root.lookupType('ratelimit.config.ratelimit.v3.RateLimitConfig');

/** One resource's bytes as a RateLimitConfig; throws with the decoder's reason when they are not one. */
export function decodeRateLimitConfig(bytes: Uint8Array): RateLimitConfigMessage {
  return RateLimitConfigType.toObject(RateLimitConfigType.decode(bytes), { enums: String, longs: Number, defaults: false }) as RateLimitConfigMessage;
}

/** A RateLimitConfig's bytes, as a management server puts them in a resource. */
export function encodeRateLimitConfig(config: RateLimitConfigMessage): Uint8Array {
  return RateLimitConfigType.encode(RateLimitConfigType.fromObject(config)).finish();
}

export interface RateLimitConfigMessage {
  name?: string;
  domain?: string;
  descriptors?: DescriptorMessage[];
}

interface DescriptorMessage {
  key?: string;
  value?: string;
  rate_limit?: { unit?: string; requests_per_unit?: number; unlimited?: boolean; name?: string; replaces?: { name?: string }[] };
  descriptors?: DescriptorMessage[];
  shadow_mode?: boolean;
  detailed_metric?: boolean;
  quota_mode?: boolean;
}

/** Only the fields set: what a config file would have written. */
function descriptorFile(message: DescriptorMessage): Record<string, unknown> {
  const out: Record<string, unknown> = { key: message.key ?? '' };
  if (message.value) out.value = message.value;
  const rateLimit = message.rate_limit;
  if (rateLimit) {
    const limit: Record<string, unknown> = {};
    if (rateLimit.unit && rateLimit.unit !== 'UNKNOWN') limit.unit = rateLimit.unit.toLowerCase();
    if (!rateLimit.unlimited) limit.requests_per_unit = rateLimit.requests_per_unit ?? 0;
    if (rateLimit.unlimited) limit.unlimited = true;
    if (rateLimit.name) limit.name = rateLimit.name;
    if (rateLimit.replaces?.length) limit.replaces = rateLimit.replaces.map((entry) => ({ name: entry.name ?? '' }));
    out.rate_limit = limit;
  }
  for (const flag of ['shadow_mode', 'detailed_metric', 'quota_mode'] as const) if (message[flag]) out[flag] = true;
  if (message.descriptors?.length) out.descriptors = message.descriptors.map(descriptorFile);
  return out;
}

/** The domains of one state of the world; a bad resource throws ConfigError naming it. */
export function domainsFromXds(resources: readonly RateLimitConfigMessage[], mergeDomains: boolean): Domains {
  const domains = new Map<string, DescriptorLevel>();
  resources.forEach((resource, index) => {
    const source = `xds:${resource.name || `resources[${index}]`}`;
    const text = stringify({ domain: resource.domain ?? '', descriptors: (resource.descriptors ?? []).map(descriptorFile) });
    const { domain, level } = withoutLines(() =>
      parseEnvoyConfig(text, source, (name) => {
        if (domains.has(name) && !mergeDomains) throw new ConfigError(source, undefined, 'domain', `duplicate domain '${name}' in config file (another resource configures it)`);
        return domains.get(name);
      }),
    );
    domains.set(domain, level);
  });
  return domains;
}

/** The lines of the YAML a resource was laid out as mean nothing to its sender: the error keeps the resource and the field. */
function withoutLines<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof ConfigError) || error.line === undefined) throw error;
    const message = error.field === undefined ? error.message.slice(error.message.indexOf(': ') + 2) : error.message.slice(error.message.indexOf(`${error.field}: `) + error.field.length + 2);
    throw new ConfigError(error.source, undefined, error.field, message);
  }
}

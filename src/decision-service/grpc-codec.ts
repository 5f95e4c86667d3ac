// The gRPC face's messages encoded and decoded by protobufjs's reflection codec
// (compiled per type at load), without proto-loader's conversion to plain
// objects on every call: a request is read straight off the decoded message.
// The RateLimitResponse is written by rls-response-frame.ts, with these enums.
import protobuf from 'protobufjs';
import { DEFAULT_GRPC_LIMITS } from '../config/decision-service.js';
import { protoPath as healthProto } from 'grpc-health-check';
import { GrpcError, GrpcStatus } from './grpc-wire.js';
import { PROTO_DIR } from './proto-files.js';
import type { RlsDescriptorIn, RlsRequestIn } from './rls-request.js';

const root = new protobuf.Root();
root.resolvePath = (_origin, target) => (target.startsWith('/') ? target : `${PROTO_DIR}/${target}`);
root.loadSync(['envoy/service/ratelimit/v3/rls.proto', healthProto], { keepCase: true });
const RequestType = root.lookupType('envoy.service.ratelimit.v3.RateLimitRequest');
const HealthRequestType = root.lookupType('grpc.health.v1.HealthCheckRequest');
const HealthResponseType = root.lookupType('grpc.health.v1.HealthCheckResponse');
/** Enum numbers by name, for rls-response-frame.ts, which writes the response itself. */
export const CODES: Readonly<Record<string, number>> = root.lookupEnum('envoy.service.ratelimit.v3.RateLimitResponse.Code').values;
export const UNITS: Readonly<Record<string, number>> = root.lookupEnum('envoy.service.ratelimit.v3.RateLimitResponse.RateLimit.Unit').values;

type Long = { toNumber(): number };
/** uint64 fields decode as long.js values: as numbers (a value past 2^53 stays past it). */
const numberOf = (value: number | Long | null | undefined): number | undefined => (value === null || value === undefined ? undefined : typeof value === 'number' ? value : value.toNumber());

interface DecodedDescriptor {
  entries: { key: string; value: string }[];
  limit: { requests_per_unit: number; unit: number } | null;
  hits_addend: { value: number | Long } | null;
}

/** Bytes that are not the message: INTERNAL, as grpc-js answers a request it cannot deserialize. */
function decoded<T>(type: protobuf.Type, bytes: Uint8Array): T {
  try {
    return type.decode(bytes) as unknown as T;
  } catch (error) {
    throw new GrpcError(GrpcStatus.INTERNAL, `cannot decode the request: ${(error as Error).message}`);
  }
}

/** RateLimitRequest's `descriptors` field number. */
const DESCRIPTORS_FIELD = 2;

/**
 * Counts the top-level descriptors without decoding them (a field scan), so a
 * message of thousands is refused before any is built.
 */
function checkDescriptorCount(bytes: Uint8Array, max: number): void {
  const reader = protobuf.Reader.create(bytes);
  let count = 0;
  try {
    while (reader.pos < reader.len) {
      const tag = reader.uint32();
      if (tag >>> 3 === DESCRIPTORS_FIELD && ++count > max) break;
      reader.skipType(tag & 7);
    }
  } catch {
    return; // not a message: the decode says so
  }
  if (count > max) throw new GrpcError(GrpcStatus.INVALID_ARGUMENT, `more than ${max} descriptors in one request (decisionService.maxDescriptors)`);
}

export function decodeRequest(bytes: Uint8Array, limits: { maxDescriptors: number; maxEntries: number } = DEFAULT_GRPC_LIMITS): RlsRequestIn {
  checkDescriptorCount(bytes, limits.maxDescriptors);
  const message = decoded<{ domain: string; descriptors: DecodedDescriptor[]; hits_addend: number | Long }>(RequestType, bytes);
  const descriptors = message.descriptors.map((descriptor, index): RlsDescriptorIn => {
    if (descriptor.entries.length > limits.maxEntries) throw new GrpcError(GrpcStatus.INVALID_ARGUMENT, `descriptors[${index}]: more than ${limits.maxEntries} entries (decisionService.maxDescriptorEntries)`);
    const out: RlsDescriptorIn = { entries: descriptor.entries };
    if (descriptor.limit) out.limit = descriptor.limit;
    if (descriptor.hits_addend) out.hits_addend = { value: numberOf(descriptor.hits_addend.value) ?? 0 };
    return out;
  });
  return { domain: message.domain, descriptors, hits_addend: numberOf(message.hits_addend) };
}

export function decodeHealthRequest(bytes: Uint8Array): string {
  return decoded<{ service: string }>(HealthRequestType, bytes).service;
}

const SERVING_STATUS = root.lookupEnum('grpc.health.v1.HealthCheckResponse.ServingStatus').values;
export function encodeHealthResponse(status: 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN'): Uint8Array {
  return HealthResponseType.encode({ status: SERVING_STATUS[status] }).finish();
}

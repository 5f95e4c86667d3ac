// A RateLimitResponse written straight into its gRPC frame (the 5-byte
// prefix, then the message): two passes over the response, one sizing it, one
// writing, into one buffer. protobufjs's encoder built a writer's list of
// operations, a copy and then the frame around it, each call; the frame
// written here costs less (docs/decision-service.md#measured). The bytes are protobufjs's own, field
// for field (test/decision-service/rls-response-frame.test.ts compares them), so
// protobufjs stays the codec of every other message.
import { CODES, UNITS } from './grpc-codec.js';
import type { RlsResponse } from './rls.js';
import type { RlsStatus } from './rls-status.js';


// Field keys (number << 3 | wire type) of envoy/service/ratelimit/v3/rls.proto.
const OVERALL_CODE = 8;
const STATUS = 18;
const HEADER = 26;
const RAW_BODY = 42;
const CODE = 8;
const CURRENT_LIMIT = 18;
const LIMIT_REMAINING = 24;
const UNTIL_RESET = 34;
const REQUESTS_PER_UNIT = 8;
const UNIT = 16;
const NAME = 26;
const SECONDS = 8;
const NANOS = 16;
const HEADER_KEY = 10;
const HEADER_VALUE = 18;

/** Varint length of a non-negative integer (up to 2^53): every number written here is one (codes, units, counts, seconds, nanos 0). */
function varintSize(value: number): number {
  let size = 1;
  for (let v = value; v >= 128; v = Math.floor(v / 128)) size++;
  return size;
}

function writeVarint(out: Buffer, at: number, value: number): number {
  let pos = at;
  let v = value;
  while (v >= 128) {
    out[pos++] = (v % 128) | 128;
    v = Math.floor(v / 128);
  }
  out[pos++] = v;
  return pos;
}

/** UTF-8 length: an ASCII string's (header names, numbers) counted here, cheaper than a call into Buffer's native code. */
function byteLength(text: string): number {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) >= 128) return Buffer.byteLength(text);
  return text.length;
}

const uint32 = (value: number): number => value >>> 0;
const lengthDelimited = (size: number): number => 1 + varintSize(size) + size;

/** Sizes of the nested messages, in writing order: encoding is synchronous, so one array serves every call. */
const sizes: number[] = [];

function limitSize(limit: NonNullable<RlsStatus['current_limit']>): number {
  let size = 1 + varintSize(uint32(limit.requests_per_unit));
  const unit = UNITS[limit.unit];
  if (unit !== undefined) size += 1 + varintSize(unit);
  if (limit.name !== undefined && limit.name !== null) size += lengthDelimited(byteLength(limit.name));
  return size;
}

function statusSize(status: RlsStatus): number {
  let size = 1 + varintSize(CODES[status.code]!);
  if (status.current_limit) {
    const limit = limitSize(status.current_limit);
    sizes.push(limit);
    size += lengthDelimited(limit);
  }
  if (status.limit_remaining !== undefined) size += 1 + varintSize(uint32(status.limit_remaining));
  const reset = status.duration_until_reset;
  if (reset) size += lengthDelimited(2 + varintSize(reset.seconds) + varintSize(reset.nanos));
  return size;
}

function messageSize(response: RlsResponse): number {
  let size = 1 + varintSize(CODES[response.overall_code]!);
  for (const status of response.statuses) {
    const at = sizes.length;
    sizes.push(0);
    sizes[at] = statusSize(status);
    size += lengthDelimited(sizes[at]!);
  }
  for (const { key, value } of response.response_headers_to_add) {
    const header = lengthDelimited(byteLength(key)) + lengthDelimited(byteLength(value));
    sizes.push(header);
    size += lengthDelimited(header);
  }
  if (response.raw_body !== undefined) size += lengthDelimited(byteLength(response.raw_body));
  return size;
}

/** The frame of a response: flag 0 (not compressed), its length (big-endian), the message. */
export function responseFrame(response: RlsResponse): Buffer {
  sizes.length = 0;
  const length = messageSize(response);
  const out = Buffer.allocUnsafe(5 + length);
  out[0] = 0;
  out.writeUInt32BE(length, 1);
  let pos = writeVarint(out, 5, OVERALL_CODE);
  pos = writeVarint(out, pos, CODES[response.overall_code]!);
  let next = 0;
  for (const status of response.statuses) {
    out[pos++] = STATUS;
    pos = writeVarint(out, pos, sizes[next++]!);
    pos = writeStatus(out, pos, status, status.current_limit ? sizes[next++]! : 0);
  }
  for (const { key, value } of response.response_headers_to_add) {
    out[pos++] = HEADER;
    pos = writeVarint(out, pos, sizes[next++]!);
    pos = writeString(out, pos, HEADER_KEY, key);
    pos = writeString(out, pos, HEADER_VALUE, value);
  }
  if (response.raw_body !== undefined) writeString(out, pos, RAW_BODY, response.raw_body);
  return out;
}

function writeStatus(out: Buffer, at: number, status: RlsStatus, limitSize: number): number {
  out[at] = CODE;
  let pos = writeVarint(out, at + 1, CODES[status.code]!);
  const limit = status.current_limit;
  if (limit) {
    out[pos++] = CURRENT_LIMIT;
    pos = writeVarint(out, pos, limitSize);
    out[pos++] = REQUESTS_PER_UNIT;
    pos = writeVarint(out, pos, uint32(limit.requests_per_unit));
    const unit = UNITS[limit.unit];
    if (unit !== undefined) {
      out[pos++] = UNIT;
      pos = writeVarint(out, pos, unit);
    }
    if (limit.name !== undefined && limit.name !== null) pos = writeString(out, pos, NAME, limit.name);
  }
  if (status.limit_remaining !== undefined) {
    out[pos++] = LIMIT_REMAINING;
    pos = writeVarint(out, pos, uint32(status.limit_remaining));
  }
  const reset = status.duration_until_reset;
  if (reset) {
    out[pos++] = UNTIL_RESET;
    pos = writeVarint(out, pos, 2 + varintSize(reset.seconds) + varintSize(reset.nanos));
    out[pos++] = SECONDS;
    pos = writeVarint(out, pos, reset.seconds);
    out[pos++] = NANOS;
    pos = writeVarint(out, pos, reset.nanos);
  }
  return pos;
}

function writeString(out: Buffer, at: number, key: number, text: string): number {
  out[at] = key;
  const bytes = byteLength(text);
  const pos = writeVarint(out, at + 1, bytes);
  // As many bytes as characters: ASCII, copied here; otherwise UTF-8 by Buffer.
  if (bytes !== text.length) return pos + out.write(text, pos);
  for (let i = 0; i < bytes; i++) out[pos + i] = text.charCodeAt(i);
  return pos + bytes;
}

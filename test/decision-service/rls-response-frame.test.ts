// The RateLimitResponse Sluice writes itself (rls-response-frame.ts) is the
// one protobufjs encodes from the same answer, byte for byte, inside a gRPC
// frame: every field set or unset, both codes, every unit, names and headers
// outside ASCII, counts at the edges of uint32, a raw body (a list's deny).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import protobuf from 'protobufjs';
import { PROTO_DIR } from '../../src/decision-service/proto-files.js';
import type { RlsResponse } from '../../src/decision-service/rls.js';
import { responseFrame } from '../../src/decision-service/rls-response-frame.js';

const root = new protobuf.Root();
root.resolvePath = (_origin, target) => `${PROTO_DIR}/${target}`;
root.loadSync('envoy/service/ratelimit/v3/rls.proto', { keepCase: true });
const ResponseType = root.lookupType('envoy.service.ratelimit.v3.RateLimitResponse');

/** protobufjs's encoding of the answer, enums by name (fromObject), unset fields left out. */
const reference = (response: RlsResponse): Buffer => {
  // fromObject reads a string for a bytes field as base64: the body goes in as its bytes
  const object = response.raw_body === undefined ? response : { ...response, raw_body: Buffer.from(response.raw_body) };
  return Buffer.from(ResponseType.encode(ResponseType.fromObject(object)).finish());
};

const answers: [string, RlsResponse][] = [
  ['no limit at all', { overall_code: 'OK', statuses: [{ code: 'OK' }], response_headers_to_add: [] }],
  ['unlimited', { overall_code: 'OK', statuses: [{ code: 'OK', limit_remaining: 4_294_967_295 }], response_headers_to_add: [] }],
  [
    'over the limit, named in UTF-8, with headers',
    {
      overall_code: 'OVER_LIMIT',
      statuses: [{ code: 'OVER_LIMIT', current_limit: { name: 'größe-€-🚦', requests_per_unit: 10, unit: 'MINUTE' }, limit_remaining: 0, duration_until_reset: { seconds: 59, nanos: 0 } }],
      response_headers_to_add: [
        { key: 'Retry-After', value: '59' },
        { key: 'X-RateLimit-Limit', value: '10, 10;w=60;name="größe"' },
      ],
    },
  ],
  [
    'several statuses, every unit, counts past one varint byte',
    {
      overall_code: 'OK',
      statuses: ['UNKNOWN', 'SECOND', 'MINUTE', 'HOUR', 'DAY', 'MONTH', 'YEAR', 'WEEK'].map((unit, i) => ({
        code: 'OK' as const,
        current_limit: { requests_per_unit: 127 * 10 ** i, unit },
        limit_remaining: 2 ** (4 * i) + i,
        duration_until_reset: { seconds: 31_536_000 * i, nanos: 0 },
      })),
      response_headers_to_add: [{ key: 'X-RateLimit-Remaining', value: '' }],
    },
  ],
  ['denied by a list: a raw body and a header', { overall_code: 'OVER_LIMIT', statuses: [{ code: 'OVER_LIMIT', limit_remaining: 0 }], response_headers_to_add: [{ key: 'x-sluice-denied', value: 'denied' }], raw_body: '{"error":"denied"}' }],
  ['a limit of 0, without a name', { overall_code: 'OVER_LIMIT', statuses: [{ code: 'OVER_LIMIT', current_limit: { requests_per_unit: 0, unit: 'SECOND' }, limit_remaining: 0, duration_until_reset: { seconds: 1, nanos: 0 } }, { code: 'OK' }], response_headers_to_add: [] }],
];

describe('the RateLimitResponse frame', () => {
  for (const [name, response] of answers) {
    it(`${name}: protobufjs's bytes in a gRPC frame`, () => {
      const frame = responseFrame(response);
      const expected = reference(response);
      assert.equal(frame[0], 0, 'not compressed');
      assert.equal(frame.readUInt32BE(1), expected.length, 'the prefix gives the message length');
      assert.equal(frame.subarray(5).toString('hex'), expected.toString('hex'));
      assert.deepEqual(ResponseType.toObject(ResponseType.decode(frame.subarray(5)), { enums: String }), ResponseType.toObject(ResponseType.decode(expected), { enums: String }));
    });
  }
});

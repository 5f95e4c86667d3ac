// A reload names every changed field it cannot apply: the listener's HTTP/2
// bounds and the gRPC server's bounds on one call are set when they start, so
// a change to them waits for a restart and the reload must say so.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { restartOnlyChanges } from '../../src/admin/config-reload.js';
import { parseConfig } from '../../src/decision-service/load-config.js';

const BASE = 'routes:\n  - { id: r, path: /r, upstream: "http://127.0.0.1:9" }\n';

describe('restart-only changes', () => {
  it('name the HTTP/2 limits and the gRPC bounds', () => {
    const before = parseConfig(`${BASE}decisionService: { httpListen: "127.0.0.1:0" }\n`);
    const after = parseConfig(
      `${BASE}limits: { http2MaxConcurrentStreams: 64, http2MaxResetsPerSecond: 50, http2ResetCooldownMs: 0 }\ndecisionService: { httpListen: "127.0.0.1:0", grpcMaxMessageBytes: 1024, maxDescriptors: 8, maxDescriptorEntries: 4 }\n`,
    );
    assert.deepEqual(restartOnlyChanges(before, after), [
      'limits.http2MaxConcurrentStreams',
      'limits.http2MaxResetsPerSecond',
      'limits.http2ResetCooldownMs',
      'decisionService.grpcMaxMessageBytes',
      'decisionService.maxDescriptors',
      'decisionService.maxDescriptorEntries',
    ]);
  });

  it('name nothing for what a reload applies', () => {
    const before = parseConfig(BASE);
    const after = parseConfig(`${BASE}limits: { maxBodyBytes: 1024, websocketIdleTimeoutMs: 1000 }\nheaders: { ietf: true }\n`);
    assert.deepEqual(restartOnlyChanges(before, after), []);
  });
});

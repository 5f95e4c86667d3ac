// GRPC_SERVER_USE_TLS and mutual TLS (GRPC_CLIENT_TLS_CACERT, GRPC_CLIENT_TLS_SAN)
// on `sluice ratelimit`'s gRPC listener, with certificates made by openssl:
// real processes, real gRPC clients over TLS.
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { namesDnsSan } from '../../src/decision-service/grpc-tls.js';
import { referenceSettings } from '../../src/decision-service/reference/settings.js';
import { sluiceConfigOf } from '../../src/decision-service/reference/sluice-config.js';
import { loadRls } from '../../src/decision-service/proto-files.js';
import { type RatelimitProcess, startRatelimitProcess, tempDir } from './ratelimit-support.js';
import { descriptor } from '../helpers/decision-service-support.js';
import { makeTestCerts, type TestCerts } from './tls-certs.js';

type AskFn = (request: unknown, done: (error: grpc.ServiceError | null, answer: { overall_code: string }) => void) => void;

/** ShouldRateLimit over TLS with these credentials; resolves with the overall code or the gRPC status code of the failure. */
async function askOver(address: string, credentials: grpc.ChannelCredentials): Promise<string | number> {
  const { Client } = loadRls();
  const client = new Client(address, credentials) as unknown as grpc.Client & { ShouldRateLimit: AskFn };
  try {
    return await new Promise((done) => {
      client.ShouldRateLimit({ domain: 'shop', descriptors: [descriptor(['api_key', 'k'])] }, (error, answer) => done(error ? error.code : answer.overall_code));
    });
  } finally {
    client.close();
  }
}

describe('TLS and mutual TLS on the gRPC listener', () => {
  const root = tempDir('sluice-grpc-tls-');
  const certDir = join(root, 'certs');
  mkdirSync(certDir);
  mkdirSync(join(root, 'config'));
  writeFileSync(join(root, 'config', 'shop.yaml'), 'domain: shop\ndescriptors:\n  - key: api_key\n    rate_limit: { unit: minute, requests_per_unit: 100 }\n');
  let certs: TestCerts;
  const processes: RatelimitProcess[] = [];
  const file = (name: string) => join(certDir, name);
  before(() => {
    certs = makeTestCerts(certDir);
  });
  after(async () => {
    await Promise.all(processes.map((running) => running.stop()));
    rmSync(root, { recursive: true, force: true });
  });
  const tlsAs = (name?: string) => (name ? grpc.credentials.createSsl(certs.pem('ca'), certs.key(name), certs.pem(name)) : grpc.credentials.createSsl(certs.pem('ca')));

  it('GRPC_SERVER_USE_TLS: a TLS client is answered; a plaintext one is not', async () => {
    const running = await startRatelimitProcess({ RUNTIME_ROOT: root, GRPC_SERVER_USE_TLS: 'true', GRPC_SERVER_TLS_CERT: file('server.pem'), GRPC_SERVER_TLS_KEY: file('server.key') });
    processes.push(running);
    assert.equal(await askOver(running.grpc, tlsAs()), 'OK');
    assert.equal(await askOver(running.grpc, grpc.credentials.createInsecure()), grpc.status.UNAVAILABLE);
  });

  it('with GRPC_CLIENT_TLS_CACERT and GRPC_CLIENT_TLS_SAN: only a client certificate of that CA naming that SAN is answered', async () => {
    const running = await startRatelimitProcess({
      RUNTIME_ROOT: root,
      GRPC_SERVER_USE_TLS: 'true',
      GRPC_SERVER_TLS_CERT: file('server.pem'),
      GRPC_SERVER_TLS_KEY: file('server.key'),
      GRPC_CLIENT_TLS_CACERT: file('ca.pem'),
      GRPC_CLIENT_TLS_SAN: 'envoy.mesh',
    });
    processes.push(running);
    assert.equal(await askOver(running.grpc, tlsAs('client')), 'OK');
    assert.equal(await askOver(running.grpc, tlsAs()), grpc.status.UNAVAILABLE, 'no client certificate: refused in the handshake');
    assert.equal(await askOver(running.grpc, tlsAs('outsider')), grpc.status.UNAVAILABLE, 'a certificate of another CA: refused in the handshake');
    assert.equal(await askOver(running.grpc, tlsAs('stranger')), grpc.status.UNAUTHENTICATED, 'the CA’s certificate without the SAN');
  });

  it('a missing or non-PEM file, or a SAN without a client CA, is an error naming the variable', () => {
    const config = (env: Record<string, string>) => sluiceConfigOf(referenceSettings({ RUNTIME_ROOT: root, GRPC_SERVER_USE_TLS: 'true', ...env }), env);
    assert.throws(() => config({ GRPC_SERVER_TLS_CERT: file('none.pem'), GRPC_SERVER_TLS_KEY: file('server.key') }), /^ConfigError: GRPC_SERVER_TLS_CERT: cannot read .*none\.pem: ENOENT$/);
    assert.throws(() => config({ GRPC_SERVER_TLS_CERT: file('server.pem'), GRPC_SERVER_TLS_KEY: file('server.ext') }), /^ConfigError: GRPC_SERVER_TLS_KEY: .*server\.ext is not a PEM file$/);
    assert.throws(() => config({ GRPC_SERVER_TLS_CERT: file('server.pem'), GRPC_SERVER_TLS_KEY: file('server.key'), GRPC_CLIENT_TLS_SAN: 'envoy.mesh' }), /GRPC_CLIENT_TLS_SAN: needs GRPC_CLIENT_TLS_CACERT/);
    assert.deepEqual(referenceSettings({ GRPC_SERVER_TLS_CERT: '/c.pem' }).ignored, [{ variable: 'GRPC_SERVER_TLS_CERT', reason: 'read only with GRPC_SERVER_USE_TLS=true' }]);
  });

  it('the SAN is matched as a whole DNS name', () => {
    assert.equal(namesDnsSan('DNS:envoy.mesh, IP Address:127.0.0.1', 'envoy.mesh'), true);
    assert.equal(namesDnsSan('DNS:envoy.mesh.evil', 'envoy.mesh'), false);
    assert.equal(namesDnsSan(undefined, 'envoy.mesh'), false);
  });
});

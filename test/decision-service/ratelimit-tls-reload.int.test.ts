// GRPC_SERVER_TLS_CERT / _KEY and GRPC_CLIENT_TLS_CACERT rotated under a running
// `sluice ratelimit`, as cert-manager rotates a Kubernetes secret (the `..data`
// symlink swapped): new handshakes present the new certificate and trust the
// new client CA, connections already open keep working, and a half-written
// rotation (a key that does not match the certificate) keeps the last good pair.
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { loadRls } from '../../src/decision-service/proto-files.js';
import { ConfigMapFolder, startRatelimitProcess, tempDir } from './ratelimit-support.js';
import { descriptor } from '../helpers/decision-service-support.js';
import { makeTestCerts, type TestCerts } from './tls-certs.js';

type AskFn = (request: unknown, done: (error: grpc.ServiceError | null, answer: { overall_code: string }) => void) => void;
type RlsClient = grpc.Client & { ShouldRateLimit: AskFn };

const ask = (client: RlsClient): Promise<string | number> =>
  new Promise((done) => client.ShouldRateLimit({ domain: 'shop', descriptors: [descriptor(['api_key', 'k'])] }, (error, answer) => done(error ? error.code : answer.overall_code)));

/** The fingerprint of the certificate a new handshake presents (trusting any CA: it is only read). */
function presented(address: string, client: { cert: Buffer; key: Buffer }): Promise<string> {
  const [host, port] = address.split(':') as [string, string];
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port: Number(port), ALPNProtocols: ['h2'], rejectUnauthorized: false, ...client }, () => {
      resolve(socket.getPeerX509Certificate()?.fingerprint256 ?? 'none');
      socket.destroy();
    });
    socket.once('error', reject);
  });
}

describe('gRPC TLS files re-read when they change', () => {
  const root = tempDir('sluice-grpc-tls-reload-');
  const secret = new ConfigMapFolder(join(root, 'secret'));
  let first: TestCerts;
  let second: TestCerts;
  before(() => {
    mkdirSync(join(root, 'config'));
    writeFileSync(join(root, 'config', 'shop.yaml'), 'domain: shop\ndescriptors:\n  - key: api_key\n    rate_limit: { unit: minute, requests_per_unit: 100 }\n');
    for (const name of ['first', 'second']) mkdirSync(join(root, name));
    first = makeTestCerts(join(root, 'first'));
    second = makeTestCerts(join(root, 'second'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));
  const secretOf = (certs: TestCerts, key = certs.key('server')) => ({ 'tls.crt': certs.pem('server').toString(), 'tls.key': key.toString(), 'ca.crt': certs.pem('ca').toString() });
  const fingerprint = (certs: TestCerts) => new X509Certificate(certs.pem('server')).fingerprint256;
  const clientOf = (certs: TestCerts, address: string) => {
    const { Client } = loadRls();
    return new Client(address, grpc.credentials.createSsl(certs.pem('ca'), certs.key('client'), certs.pem('client'))) as unknown as RlsClient;
  };

  it('a secret swap: new handshakes get the new certificate and CA, open connections stay, a mismatched pair is refused and the last good one kept', async () => {
    secret.swap(secretOf(first));
    const file = (name: string) => join(secret.dir, name);
    const running = await startRatelimitProcess({ RUNTIME_ROOT: root, GRPC_SERVER_USE_TLS: 'true', GRPC_SERVER_TLS_CERT: file('tls.crt'), GRPC_SERVER_TLS_KEY: file('tls.key'), GRPC_CLIENT_TLS_CACERT: file('ca.crt') });
    const held = clientOf(first, running.grpc);
    const clients = [held];
    try {
      const firstClient = { cert: first.pem('client'), key: first.key('client') };
      assert.equal(await presented(running.grpc, firstClient), fingerprint(first));
      assert.equal(await ask(held), 'OK');

      const logged = running.logs.length;
      secret.swap(secretOf(second, first.key('server')));
      await running.waitForLog(/^gRPC TLS files changed but cannot be used/, logged);
      assert.equal(await presented(running.grpc, firstClient), fingerprint(first), 'the half-written rotation is not used');

      const reread = running.logs.length;
      secret.swap(secretOf(second));
      await running.waitForLog(/^gRPC TLS files re-read/, reread);
      assert.equal(await presented(running.grpc, { cert: second.pem('client'), key: second.key('client') }), fingerprint(second));
      const fresh = clientOf(second, running.grpc);
      const stale = clientOf(first, running.grpc);
      clients.push(fresh, stale);
      assert.equal(await ask(fresh), 'OK', 'a client of the new CA, trusting the new server certificate');
      assert.equal(await ask(stale), grpc.status.UNAVAILABLE, 'a new connection of the old CA is refused');
      assert.equal(await ask(held), 'OK', 'the connection opened before the swap still answers');
    } finally {
      for (const client of clients) client.close();
      await running.stop();
    }
  });
});

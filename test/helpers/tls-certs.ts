// Certificates made with openssl for one test file: a private CA, a server
// certificate for 127.0.0.1 and localhost it signed, a client certificate it
// signed (mutual TLS), and a second CA that signed none of them.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificates {
  readonly dir: string;
  /** PEM files: the CA, the server's certificate and key, the client's certificate and key. */
  readonly ca: string;
  readonly serverCert: string;
  readonly serverKey: string;
  readonly clientCert: string;
  readonly clientKey: string;
  /** A CA that signed nothing here: trusting it alone must fail the handshake. */
  readonly otherCa: string;
  remove(): void;
}

export function makeCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-tls-'));
  const at = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  const selfSignedCa = (name: string) => openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${name}`, '-keyout', at(`${name}.key`), '-out', at(`${name}.pem`));
  const signed = (name: string, extensions: string) => {
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${name}`, '-keyout', at(`${name}.key`), '-out', at(`${name}.csr`));
    writeFileSync(at(`${name}.ext`), extensions);
    openssl('x509', '-req', '-in', at(`${name}.csr`), '-CA', at('ca.pem'), '-CAkey', at('ca.key'), '-CAcreateserial', '-days', '2', '-extfile', at(`${name}.ext`), '-out', at(`${name}.pem`));
  };
  selfSignedCa('ca');
  selfSignedCa('other-ca');
  signed('server', 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:redis.sluice.test\nextendedKeyUsage=serverAuth\n');
  signed('client', 'extendedKeyUsage=clientAuth\n');
  return {
    dir,
    ca: at('ca.pem'),
    serverCert: at('server.pem'),
    serverKey: at('server.key'),
    clientCert: at('client.pem'),
    clientKey: at('client.key'),
    otherCa: at('other-ca.pem'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

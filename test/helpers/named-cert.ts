// One more server certificate signed by the CA of makeCertificates(), for the
// names given: a second certificate a listener serves by SNI.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestCertificates } from './tls-certs.js';

export function namedCertificate(certs: TestCertificates, file: string, names: string[]): { cert: string; key: string } {
  const at = (name: string) => join(certs.dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: certs.dir, stdio: 'ignore' });
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${names[0]}`, '-keyout', at(`${file}.key`), '-out', at(`${file}.csr`));
  writeFileSync(at(`${file}.ext`), `subjectAltName=${names.map((name) => `DNS:${name}`).join(',')}\nextendedKeyUsage=serverAuth\n`);
  openssl('x509', '-req', '-in', at(`${file}.csr`), '-CA', certs.ca, '-CAkey', at('ca.key'), '-CAcreateserial', '-days', '2', '-extfile', at(`${file}.ext`), '-out', at(`${file}.pem`));
  return { cert: at(`${file}.pem`), key: at(`${file}.key`) };
}

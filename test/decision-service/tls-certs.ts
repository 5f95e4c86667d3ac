// Certificates for the gRPC TLS tests, made with the real openssl in a temp
// folder: a CA, a server certificate for 127.0.0.1/localhost, clients it signs
// (each with a DNS SAN), and a client of another CA.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const openssl = (dir: string, args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });

function makeCa(dir: string, name: string): void {
  openssl(dir, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '2', '-subj', `/CN=${name}`]);
}

function makeSigned(dir: string, name: string, ca: string, san: string, usage: string): void {
  openssl(dir, ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`]);
  writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${san}\nextendedKeyUsage=${usage}\n`);
  openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.pem`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.pem`, '-days', '2', '-extfile', `${name}.ext`]);
}

export interface TestCerts {
  readonly dir: string;
  /** PEM text of `<name>.pem` / `<name>.key`. */
  pem(name: string): Buffer;
  key(name: string): Buffer;
}

/** ca, server (127.0.0.1, localhost), client (DNS:envoy.mesh), stranger (DNS:other.mesh), outsider (envoy.mesh, signed by other-ca). */
export function makeTestCerts(dir: string): TestCerts {
  makeCa(dir, 'ca');
  makeCa(dir, 'other-ca');
  makeSigned(dir, 'server', 'ca', 'IP:127.0.0.1,DNS:localhost', 'serverAuth');
  makeSigned(dir, 'client', 'ca', 'DNS:envoy.mesh', 'clientAuth');
  makeSigned(dir, 'stranger', 'ca', 'DNS:other.mesh', 'clientAuth');
  makeSigned(dir, 'outsider', 'other-ca', 'DNS:envoy.mesh', 'clientAuth');
  return { dir, pem: (name) => readFileSync(join(dir, `${name}.pem`)), key: (name) => readFileSync(join(dir, `${name}.key`)) };
}

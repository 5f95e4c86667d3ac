// TLS for a listener (the gateway's `tls:`, the admin API's `admin.tls`): PEM
// files named in the config, checked when the config loads (a missing file, a
// key that does not match its certificate: a config error naming the field),
// and read again on every reload so a renewed certificate takes effect
// without a restart.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import { z } from 'zod';
import { HOST_NAME_PATTERN } from './route-forwarding.js';

const pemFile = z.string().min(1, 'must name a PEM file');
const serverName = z
  .string()
  .regex(HOST_NAME_PATTERN, 'must be a server name such as api.example.com or *.example.com')
  .transform((name) => name.toLowerCase());

export const tlsFields = {
  cert: pemFile.meta({ description: "PEM certificate chain, relative to the config file's folder; served to clients no `sni` entry matches" }),
  key: pemFile.meta({ description: 'its PEM private key' }),
  /** More certificates, each served to clients that ask for one of its names (SNI). */
  sni: z
    .array(
      z
        .object({
          names: z.array(serverName).min(1, 'must list at least one name').meta({ description: 'names this certificate serves: exact, or `*.` for any name under it' }),
          cert: pemFile.meta({ description: 'PEM certificate chain' }),
          key: pemFile.meta({ description: 'its PEM private key' }),
        })
        .strict(),
    )
    .default([])
    .meta({ description: 'more certificates, each served to clients that ask for one of its names (SNI)' }),
  /** HTTP/2 for clients that offer it (ALPN), HTTP/1.1 for the others, on the same port. */
  http2: z.boolean().default(true).meta({ description: 'HTTP/2 for clients that offer it (ALPN), HTTP/1.1 for the others, on the same port' }),
  /** Oldest protocol version accepted. */
  minVersion: z.enum(['TLSv1.2', 'TLSv1.3'], 'must be TLSv1.2 or TLSv1.3').default('TLSv1.2').meta({ description: 'oldest protocol version accepted' }),
};
export const tlsSchema = z.object(tlsFields).strict();

export interface CertificatePair {
  readonly cert: string;
  readonly key: string;
}

export interface TlsConfig extends CertificatePair {
  readonly sni: readonly (CertificatePair & { readonly names: readonly string[] })[];
  readonly minVersion: 'TLSv1.2' | 'TLSv1.3';
  /** Offer HTTP/2 by ALPN (the gateway's listener only). */
  readonly http2?: boolean;
}

/** The PEM contents of a pair, ready for a secure context; throws naming the field that failed. */
export function readPair(pair: CertificatePair, field: string): SecureContextOptions {
  const read = (path: string, which: 'cert' | 'key') => {
    try {
      return readFileSync(path);
    } catch (error) {
      throw new TlsFileError(`${field}.${which}`, `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  };
  const options = { cert: read(pair.cert, 'cert'), key: read(pair.key, 'key') };
  try {
    createSecureContext(options);
  } catch (error) {
    throw pairError(pair, options, field, error as Error);
  }
  return options;
}

/** Which file of a pair the secure context refused: a certificate that does not parse, a key that does not, or a key that is not the certificate's. */
function pairError(pair: CertificatePair, pem: { cert: Buffer; key: Buffer }, field: string, error: Error): TlsFileError {
  const parses = (parse: () => unknown) => {
    try {
      parse();
      return true;
    } catch {
      return false;
    }
  };
  if (!parses(() => new X509Certificate(pem.cert))) return new TlsFileError(`${field}.cert`, `${pair.cert} is not a PEM certificate: ${error.message}`);
  if (!parses(() => createPrivateKey(pem.key))) return new TlsFileError(`${field}.key`, `${pair.key} is not a PEM private key: ${error.message}`);
  return new TlsFileError(`${field}.key`, `${pair.cert} and ${pair.key} are no usable certificate and key: ${error.message}`);
}

export class TlsFileError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** The file's `tls:` with paths taken from `baseDir`, every file checked now. */
export function tlsOf(file: Omit<z.infer<typeof tlsSchema>, 'http2'> & { http2?: boolean }, baseDir: string, field: string): TlsConfig {
  const at = (path: string) => resolve(baseDir, path);
  const tls: TlsConfig = {
    cert: at(file.cert),
    key: at(file.key),
    minVersion: file.minVersion,
    http2: file.http2,
    sni: file.sni.map((entry) => ({ names: entry.names, cert: at(entry.cert), key: at(entry.key) })),
  };
  readPair(tls, field);
  tls.sni.forEach((entry, index) => {
    readPair(entry, `${field}.sni[${index}]`);
  });
  return tls;
}

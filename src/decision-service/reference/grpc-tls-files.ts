// GRPC_SERVER_TLS_CERT / _KEY and GRPC_CLIENT_TLS_CACERT read at start: a file
// that cannot be read, or is not PEM, is an error naming its variable. The
// listener watches the same files and reads them again when they change.
import { readFileSync } from 'node:fs';
import { ConfigError } from '../../config/config-error.js';
import type { GrpcTls } from '../grpc-tls.js';

/** The GRPC_SERVER_TLS_* / GRPC_CLIENT_TLS_* settings: file paths, read by readGrpcTls. */
export interface GrpcTlsSettings {
  certFile: string;
  keyFile: string;
  /** GRPC_CLIENT_TLS_CACERT: clients must present a certificate it signs (mutual TLS). */
  clientCaFile: string | undefined;
  /** GRPC_CLIENT_TLS_SAN: and that certificate must name this DNS SAN. */
  clientSan: string | undefined;
}

export function pemFile(variable: string, path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(variable, undefined, undefined, `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (!text.includes('-----BEGIN ')) throw new ConfigError(variable, undefined, undefined, `${path} is not a PEM file`);
  return text;
}

export function readGrpcTls(settings: GrpcTlsSettings | undefined): GrpcTls | undefined {
  if (!settings) return undefined;
  const files = [settings.certFile, settings.keyFile, ...(settings.clientCaFile === undefined ? [] : [settings.clientCaFile])];
  return {
    reload: { files, read: () => readGrpcTls(settings)! },
    cert: pemFile('GRPC_SERVER_TLS_CERT', settings.certFile),
    key: pemFile('GRPC_SERVER_TLS_KEY', settings.keyFile),
    clientCa: settings.clientCaFile === undefined ? undefined : pemFile('GRPC_CLIENT_TLS_CACERT', settings.clientCaFile),
    clientSan: settings.clientSan,
  };
}

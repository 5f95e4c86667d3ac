// GRPC_SERVER_TLS_CERT / _KEY and GRPC_CLIENT_TLS_CACERT re-read when one of
// them changes: edited in place, or a Kubernetes secret's `..data` symlink
// swapped (cert-manager's rotation). Polled by stat, which follows symlinks, so
// a swap is seen as surely as an edit. New handshakes use the new files;
// connections open keep theirs. A half-written rotation (a key that does not
// match the certificate yet) is logged and the last good files kept until the
// next change.
import { unwatchFile, watchFile } from 'node:fs';
import type { Http2SecureServer } from 'node:http2';
import { createSecureContext } from 'node:tls';
import type { Logger } from 'pino';
import { type GrpcTls, secureOptions } from './grpc-tls.js';

export const TLS_POLL_MS = 1000;

/** Watches `tls`'s files; returns the function that stops watching. */
export function watchTlsFiles(server: Http2SecureServer, tls: GrpcTls, log: Logger, pollMs = TLS_POLL_MS): () => void {
  const reload = tls.reload;
  if (!reload) return () => {};
  const changed = () => {
    try {
      const options = secureOptions(reload.read());
      createSecureContext(options); // throws on a key that does not match its certificate
      server.setSecureContext(options);
      log.info({ files: reload.files }, 'gRPC TLS files re-read: new connections use them');
    } catch (error) {
      log.warn({ err: (error as Error).message }, 'gRPC TLS files changed but cannot be used; the last good ones are kept');
    }
  };
  const listener = (now: { mtimeMs: number; ino: number }, before: { mtimeMs: number; ino: number }) => {
    if (now.mtimeMs !== before.mtimeMs || now.ino !== before.ino) changed();
  };
  for (const file of reload.files) watchFile(file, { persistent: false, interval: pollMs }, listener);
  return () => {
    for (const file of reload.files) unwatchFile(file, listener);
  };
}

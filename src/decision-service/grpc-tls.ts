// TLS on the gRPC listener, and mutual TLS: with a client CA every client must
// present a certificate it signs (the handshake refuses the rest), and with a
// SAN that certificate must name it too, as the reference's
// GRPC_CLIENT_TLS_CACERT / GRPC_CLIENT_TLS_SAN require. A call whose
// certificate lacks the SAN is UNAUTHENTICATED before any handler runs.
import type { Http2Session, SecureServerOptions } from 'node:http2';
import type { TLSSocket } from 'node:tls';
import type { GrpcTls } from '../config/decision-service.js';

export type { GrpcTls } from '../config/decision-service.js';

/** What a new handshake is made with (ALPN h2 only, as gRPC clients require). */
export function secureOptions(tls: GrpcTls): SecureServerOptions {
  const mutual = tls.clientCa !== undefined;
  return { cert: tls.cert, key: tls.key, ca: tls.clientCa, requestCert: mutual, rejectUnauthorized: mutual, ALPNProtocols: ['h2'] };
}

/** `DNS:a.example, IP Address:127.0.0.1` → whether `DNS:<san>` is among them. */
export function namesDnsSan(subjectAltName: string | undefined, san: string): boolean {
  return (subjectAltName ?? '').split(/,\s*/).some((name) => name === `DNS:${san}`);
}

const sanChecked = new WeakMap<Http2Session, boolean>();

/** Whether the session's client certificate names `san` (checked once per connection). */
export function sessionNamesSan(session: Http2Session, san: string): boolean {
  let named = sanChecked.get(session);
  if (named === undefined) {
    named = namesDnsSan((session.socket as TLSSocket).getPeerCertificate?.()?.subjectaltname, san);
    sanChecked.set(session, named);
  }
  return named;
}

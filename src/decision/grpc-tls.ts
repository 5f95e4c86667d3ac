// TLS on the gRPC listener, and mutual TLS: with a client CA every client must
// present a certificate it signs (the handshake refuses the rest), and with a
// SAN that certificate must name it too, as the reference's
// GRPC_CLIENT_TLS_CACERT / GRPC_CLIENT_TLS_SAN require. A call whose
// certificate lacks the SAN is UNAUTHENTICATED before any handler runs.
import * as grpc from '@grpc/grpc-js';
import type { GrpcTls } from '../config/decision-service.js';

export type { GrpcTls } from '../config/decision-service.js';

export function serverCredentials(tls: GrpcTls | undefined): grpc.ServerCredentials {
  if (!tls) return grpc.ServerCredentials.createInsecure();
  const pair = { private_key: Buffer.from(tls.key), cert_chain: Buffer.from(tls.cert) };
  return grpc.ServerCredentials.createSsl(tls.clientCa ? Buffer.from(tls.clientCa) : null, [pair], tls.clientCa !== undefined);
}

/** `DNS:a.example, IP Address:127.0.0.1` → whether `DNS:<san>` is among them. */
export function namesDnsSan(subjectAltName: string | undefined, san: string): boolean {
  return (subjectAltName ?? '').split(/,\s*/).some((name) => name === `DNS:${san}`);
}

export function sanInterceptors(tls: GrpcTls | undefined): grpc.ServerInterceptor[] {
  const san = tls?.clientSan;
  if (san === undefined) return [];
  return [
    (_method, call) =>
      new grpc.ServerInterceptingCall(call, {
        start: (next) => {
          if (namesDnsSan(call.getAuthContext().sslPeerCertificate?.subjectaltname, san)) next();
          else call.sendStatus({ code: grpc.status.UNAUTHENTICATED, details: `the client certificate does not name ${san} (GRPC_CLIENT_TLS_SAN)` });
        },
      }),
  ];
}

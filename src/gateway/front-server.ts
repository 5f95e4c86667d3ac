// The listener clients connect to: plain HTTP/1.1, or with `tls:` HTTPS (TLS
// 1.2 at least, a certificate per server name by SNI, re-read on every reload
// without touching open connections). With `tls.redirectHttp`, a plain
// listener that answers every request with a permanent redirect to HTTPS.
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import { createSecureServer, type Http2Session } from 'node:http2';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { createSecureContext, type SecureContext, type SecureContextOptions } from 'node:tls';
import { readPair, type TlsConfig } from '../config/tls.js';
import type { ListenAddress } from '../config/types.js';
import { hostName } from '../http/hop-by-hop.js';
import { guardSession, type Http2SessionLimits } from './http2-session-guard.js';
import type { ResetCooldown } from './reset-cooldown.js';

/** The certificates in use, swapped whole on reload; the SNI callback reads the current ones. */
class Certificates {
  private byName = new Map<string, SecureContext>();
  private wildcards: [suffix: string, context: SecureContext][] = [];

  constructor(private readonly field: string) {}

  /** Reads every file again; throws (naming the field) before anything is swapped. */
  load(tls: TlsConfig): SecureContextOptions {
    const main = readPair(tls, this.field);
    const byName = new Map<string, SecureContext>();
    const wildcards: [string, SecureContext][] = [];
    tls.sni.forEach((entry, index) => {
      const context = createSecureContext({ ...readPair(entry, `${this.field}.sni[${index}]`), minVersion: tls.minVersion });
      for (const name of entry.names) {
        if (name.startsWith('*.')) wildcards.push([name.slice(1), context]);
        else byName.set(name, context);
      }
    });
    this.byName = byName;
    this.wildcards = wildcards;
    return { ...main, minVersion: tls.minVersion };
  }

  /** An SNI name's own certificate, or undefined for the default one. */
  contextFor(servername: string): SecureContext | undefined {
    const name = servername.toLowerCase();
    return this.byName.get(name) ?? this.wildcards.find(([suffix]) => name.length > suffix.length && name.endsWith(suffix))?.[1];
  }
}

export interface FrontServer {
  server: Server;
  /** Listens, then starts the redirect listener if there is one. */
  listen(host: string, port: number): Promise<AddressInfo>;
  closeRedirect(): void;
  /** The open HTTP/2 sessions (none without HTTP/2), for the drain's GOAWAY. */
  sessions: ReadonlySet<Http2Session>;
  /** Reads the certificates again (a reload); no-op without TLS. */
  reloadCertificates(tls: TlsConfig | undefined): void;
}

/** The listener's options; `http2` bounds each HTTP/2 session (http2-session-guard.ts), `handshakeTimeout` a TLS handshake (ms). */
export type FrontOptions = ServerOptions & { http2?: Http2SessionLimits; handshakeTimeout?: number; resetCooldown?: ResetCooldown };

export function createFrontServer(options: FrontOptions, tls: TlsConfig | undefined, handler: RequestListener, redirectFrom?: ListenAddress, field = 'tls'): FrontServer {
  const sessions = new Set<Http2Session>();
  if (tls === undefined) return withListen({ server: createServer(options, handler), sessions, reloadCertificates: () => {} }, undefined);
  const certificates = new Certificates(field);
  const secure = { ...certificates.load(tls), SNICallback: (servername: string, done: (error: Error | null, context?: SecureContext) => void) => done(null, certificates.contextFor(servername)) };
  const server = (tls.http2 ? createHttp2Server(options, secure, handler, sessions) : createHttpsServer({ ...options, ...secure }, handler)) as unknown as Server;
  return withListen({
    server,
    sessions,
    reloadCertificates(next) {
      if (next === undefined) return; // turning TLS off takes a restart (the reload says so)
      (server as unknown as { setSecureContext(options: SecureContextOptions): void }).setSecureContext(certificates.load(next));
    },
  }, redirectFrom);
}

function withListen(front: Omit<FrontServer, 'listen' | 'closeRedirect'>, redirectFrom: ListenAddress | undefined): FrontServer {
  let redirect: Server | undefined;
  return {
    ...front,
    async listen(host, port) {
      const address = await listenOn(front.server, host, port);
      if (redirectFrom) redirect = await startRedirect(redirectFrom.host, redirectFrom.port, address.port);
      return address;
    },
    closeRedirect: () => redirect?.close().closeAllConnections(),
  };
}

/** A plain-HTTP listener that sends every request to the same host and path over HTTPS. */
export function startRedirect(host: string, port: number, httpsPort: number): Promise<Server> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const name = hostWithoutPort(req.headers.host);
    const target = `https://${name}${httpsPort === 443 ? '' : `:${httpsPort}`}${req.url ?? '/'}`;
    // 308 keeps the method and body, where 301 lets clients turn a POST into a GET.
    res.writeHead(name === '' ? 400 : 308, name === '' ? { 'content-type': 'application/json' } : { location: target, 'content-length': '0' });
    res.end(name === '' ? '{"error":"bad_request"}' : undefined);
  });
  return listenOn(server, host, port).then(() => server);
}

export function listenOn(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/** The Host header's name, or '' when it holds anything a Location header must not carry. */
function hostWithoutPort(host: string | undefined): string {
  return host && /^[A-Za-z0-9.:[\]-]+$/.test(host) ? hostName(host) : '';
}

/**
 * HTTP/2 for clients that offer it by ALPN, HTTP/1.1 on the same port for the
 * others; node's compatibility API hands both to the same request handler. The
 * HTTP/1.1 side keeps the listener's header and request timeouts.
 */
function createHttp2Server(options: FrontOptions, secure: SecureContextOptions & { SNICallback: unknown }, handler: RequestListener, sessions: Set<Http2Session>) {
  // enableConnectProtocol: clients may open WebSocket streams (RFC 8441, tunnel-http2.ts).
  // Http1ServerResponse: the HTTP/1.1 side drains like the plain listener (drain.ts).
  const http1 = options.ServerResponse ? { Http1ServerResponse: options.ServerResponse } : {};
  const server = createSecureServer({ ...secure, ...http1, handshakeTimeout: options.handshakeTimeout, allowHTTP1: true, maxSessionMemory: 64, settings: { enableConnectProtocol: true, maxConcurrentStreams: options.http2?.maxConcurrentStreams } } as Parameters<typeof createSecureServer>[0], handler as never);
  // The HTTP/1.1 side checks these deadlines every connectionsCheckingInterval (30 s unless set here too).
  Object.assign(server, { headersTimeout: options.headersTimeout, requestTimeout: options.requestTimeout, connectionsCheckingInterval: options.connectionsCheckingInterval });
  const cooldown = options.resetCooldown;
  // Ahead of the TLS server's own listener, so a refused address costs an accept and a close, no handshake.
  if (cooldown) server.prependListener('connection', (socket: Socket) => cooldown.refuses(socket.remoteAddress) && socket.destroy());
  server.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    if (options.http2) guardSession(session, options.http2, (cutSession) => cooldown?.cut(cutSession.socket?.remoteAddress));
  });
  return server;
}

// A JWK set served on loopback, as an identity provider serves its jwks_uri,
// that a test can rotate (change `keys`) or make stall (hold every request).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JWK } from 'jose';

export interface JwksServer {
  url: string;
  /** How many times the set was asked for. */
  fetches: number;
  keys: JWK[];
  /** While true, requests are held unanswered (a provider that stalls). */
  stall: boolean;
  close(): Promise<void>;
}

export function startJwks(keys: JWK[]): Promise<JwksServer> {
  const held: ServerResponse[] = [];
  const state = { fetches: 0, keys, stall: false } as JwksServer;
  const server: Server = createServer((_req: IncomingMessage, res: ServerResponse) => {
    state.fetches++;
    if (state.stall) {
      held.push(res);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: state.keys }));
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
      state.close = () =>
        new Promise<void>((done) => {
          for (const res of held) res.destroy();
          server.close(() => done());
          server.closeAllConnections();
        });
      resolve(state);
    });
  });
}

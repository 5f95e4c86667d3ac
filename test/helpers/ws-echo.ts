// A `ws` upstream for the WebSocket tests: echoes every message back, answers a
// plain 403 to upgrades under /refuse, a 101 with a wrong Sec-WebSocket-Accept
// under /bad-accept, and notes every upgrade it saw.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';

export interface EchoUpstream {
  url: string;
  upgrades: { path: string; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}

export async function startEcho(): Promise<EchoUpstream> {
  const upgrades: EchoUpstream['upgrades'] = [];
  const server: Server = createServer((_req, res) => res.end('plain'));
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    upgrades.push({ path: req.url ?? '', headers: req.headers });
    if (req.url?.startsWith('/refuse')) {
      socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno');
      return;
    }
    if (req.url?.startsWith('/bad-accept')) {
      socket.end('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: bm90IHRoZSBrZXk=\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => ws.on('message', (data, binary) => ws.send(data, { binary })));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    upgrades,
    close: async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

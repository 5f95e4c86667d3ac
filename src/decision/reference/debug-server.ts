// DEBUG_HOST:DEBUG_PORT, as the reference serves it: /rlconfig (the loaded
// limits) and /healthcheck. Its Go profiler endpoints have no Node equivalent.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ListenAddress } from '../../config/types.js';
import type { Domains } from '../descriptor-tree.js';
import { dumpDomains } from './rlconfig.js';

export class DebugServer {
  private readonly server: Server;

  /** `domains()` is read per request: a reload shows at once. */
  constructor(domains: () => Domains) {
    this.server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (path === '/rlconfig') res.writeHead(200, { 'content-type': 'text/plain' }).end(dumpDomains(domains()));
      else if (path === '/healthcheck') res.writeHead(200, { 'content-type': 'text/plain' }).end('OK\n');
      else res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: /rlconfig, /healthcheck\n');
    });
  }

  listen({ host, port }: ListenAddress): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve(this.server.address() as AddressInfo);
      });
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

// DEBUG_HOST:DEBUG_PORT, as the reference serves it: /rlconfig (the loaded
// limits) and /healthcheck. Its Go profiler endpoints have no Node equivalent.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ListenAddress } from '../../config/types.js';
import { closeHttp, listenHttp } from './http-listen.js';
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

  listen(address: ListenAddress): Promise<AddressInfo> {
    return listenHttp(this.server, address);
  }

  close(): Promise<void> {
    return closeHttp(this.server);
  }
}

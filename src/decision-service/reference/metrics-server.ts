// PROMETHEUS_ADDR and PROMETHEUS_PATH: the reference's series on a listener of their own.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ListenAddress } from '../../config/types.js';
import { closeHttp, listenHttp } from './http-listen.js';
import type { Registry } from 'prom-client';

export class MetricsServer {
  private readonly server: Server;

  constructor(registry: Registry, path: string) {
    this.server = createServer((req, res) => {
      if ((req.url ?? '/').split('?')[0] !== path) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found: the metrics are at ${path}\n`);
        return;
      }
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n'),
      );
    });
  }

  listen(address: ListenAddress): Promise<AddressInfo> {
    return listenHttp(this.server, address);
  }

  close(): Promise<void> {
    return closeHttp(this.server);
  }
}

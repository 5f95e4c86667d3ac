// Binding and closing the small HTTP listeners of `sluice ratelimit` (debug, metrics).
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ListenAddress } from '../../config/types.js';

export function listenHttp(server: Server, { host, port }: ListenAddress): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

export function closeHttp(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

export const urlOf = ({ address, port }: AddressInfo): string => `http://${address.includes(':') ? `[${address}]` : address}:${port}`;

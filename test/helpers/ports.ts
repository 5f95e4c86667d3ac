// Free loopback ports for the servers the tests start. A port is picked below
// the kernel's ephemeral range: a port from listen(0) is one the kernel also
// hands to outbound connections, so between the pick and the server's own
// listen a client socket of another test could take it (EADDRINUSE).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const LOWEST = 10_000;

/** The first port of the kernel's ephemeral range (Linux's default when it cannot be read). */
function ephemeralStart(): number {
  try {
    const first = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(first) && first > 0 ? first : 32_768;
  } catch {
    return 32_768;
  }
}

const HIGHEST = ephemeralStart() - 1;

function listenOn(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : undefined;
      server.close(() => resolve(bound));
    });
  });
}

export async function freePort(): Promise<number> {
  if (HIGHEST - LOWEST >= 1000) {
    for (let attempt = 0; attempt < 100; attempt++) {
      const port = await listenOn(LOWEST + Math.floor(Math.random() * (HIGHEST - LOWEST + 1)));
      if (port !== undefined) return port;
    }
  }
  // No room below the ephemeral range (or all taken): any port the kernel gives.
  const port = await listenOn(0);
  if (port === undefined) throw new Error('no free loopback port');
  return port;
}

// Shared pieces of the library tests: a silent logger, Fastify and Express apps
// on free loopback ports, and plain HTTP calls that report status, headers and body.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { Agent, request } from 'undici';

export const silent = pino({ level: 'silent' });

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const agent = new Agent({ connections: 16, keepAliveTimeout: 1_000 });

export async function call(url: string, headers: Record<string, string> = {}): Promise<Reply> {
  const response = await request(url, { headers, dispatcher: agent });
  return { status: response.statusCode, headers: response.headers, body: await response.body.text() };
}

export interface Running {
  url: string;
  close(): Promise<void>;
}

/** An Express app on a free port of `host` (127.0.0.1 or ::1). */
export function listenExpress(app: Express, host = '127.0.0.1'): Promise<Running> {
  return new Promise((resolve) => {
    const server: Server = app.listen(0, host, () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

export async function listenFastify(app: FastifyInstance, host = '127.0.0.1'): Promise<Running> {
  const url = await app.listen({ port: 0, host });
  return { url, close: () => app.close() };
}

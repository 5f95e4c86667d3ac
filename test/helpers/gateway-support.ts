// Helpers for the gateway tests: upstreams on free ports, a gateway built from
// YAML text, and plain HTTP calls that report status, headers and body.
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { Agent, request } from 'undici';
import { type RunningSluice, type StartOptions, startSluice } from '../../src/app.js';
import type { Env } from '../../src/config/index.js';
import { parseConfig } from '../../src/decision-service/load-config.js';

export const silent = pino({ level: 'silent' });

export interface TestUpstream {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** An upstream on a free port; the default handler answers 200 with a small JSON body. */
export function startUpstream(handler?: (req: IncomingMessage, res: ServerResponse) => void): Promise<TestUpstream> {
  const server = createServer(
    handler ??
      ((req, res) => {
        req.resume();
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ path: req.url, method: req.method }));
        });
      }),
  );
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        server,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

/** Starts a gateway on a free port from YAML text (with `${VAR}` taken from `env`). */
export async function startGateway(yaml: string, env: Env = {}, options: StartOptions = {}): Promise<RunningSluice> {
  const config = parseConfig(yaml, { source: 'test.yaml', env: { SLUICE_LISTEN: '127.0.0.1:0', ...env } });
  return startSluice(config, { logger: silent, shutdownGraceMs: 2_000, ...options });
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export const agent = new Agent({ connections: 256, keepAliveTimeout: 1_000 });

export async function call(url: string, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<Reply> {
  const response = await request(url, { method: (options.method ?? 'GET') as 'GET', headers: options.headers, body: options.body, dispatcher: agent });
  return { status: response.statusCode, headers: response.headers, body: await response.body.text() };
}

/** Counts of each status code among the replies. */
export function tally(replies: { status: number }[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const reply of replies) out[reply.status] = (out[reply.status] ?? 0) + 1;
  return out;
}

/** node's client, which (unlike undici) lets a test send Connection, Keep-Alive, TE and its own Host. */
export function nodeCall(url: string, headers: Record<string, string>): Promise<{ status: number; headers: IncomingMessage['headers']; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

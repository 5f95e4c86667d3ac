// Helpers for the HTTP/2 hardening tests: a TLS gateway with h2, an engine
// whose decisions the test holds, a client session and one GET stream.
import { readFileSync } from 'node:fs';
import { type ClientHttp2Session, type ClientHttp2Stream, connect, type OutgoingHttpHeaders } from 'node:http2';
import { engineFromConfig } from '../../src/app.js';
import { parseConfig } from '../../src/decision-service/load-config.js';
import type { Engine } from '../../src/limiter/engine/engine.js';
import type { TestCertificates } from '../helpers/tls-certs.js';
import { silent } from '../helpers/gateway-support.js';

/** An engine whose decisions wait while `hold` is on; `waiting` counts them. */
export interface HeldEngine extends Engine {
  hold: boolean;
  readonly waiting: number;
  release(): void;
}

export function heldEngine(yaml: string, env: Record<string, string>): HeldEngine {
  const inner = engineFromConfig(parseConfig(yaml, { source: 'test.yaml', env: { SLUICE_LISTEN: '127.0.0.1:0', ...env } }), silent);
  const queue: Array<() => void> = [];
  const engine = {
    decide: async (...args: Parameters<Engine['decide']>) => {
      if (engine.hold) await new Promise<void>((go) => queue.push(go));
      return inner.decide(...args);
    },
    peek: (...args: Parameters<Engine['peek']>) => inner.peek(...args),
    reset: (...args: Parameters<Engine['reset']>) => inner.reset(...args),
    inspect: (...args: Parameters<Engine['inspect']>) => inner.inspect(...args),
    health: () => inner.health(),
    counters: () => inner.counters(),
    close: () => inner.close(),
  } as unknown as HeldEngine;
  Object.assign(engine, {
    hold: false,
    release: () => {
      engine.hold = false;
      for (const go of queue.splice(0)) go();
    },
    decideAll: async (calls: Parameters<Engine['decideAll']>[0]) => {
      if (engine.hold) await new Promise<void>((go) => queue.push(go));
      return inner.decideAll(calls);
    },
  });
  Object.defineProperty(engine, 'waiting', { get: () => queue.length });
  return engine;
}

export function h2Session(url: string, certs: TestCertificates): ClientHttp2Session {
  const session = connect(url, { ca: readFileSync(certs.ca) });
  session.on('error', () => {}); // a GOAWAY'd or cut session is what some tests expect
  return session;
}

/** One stream; `answer` resolves with its status (0 if it was reset first) and body once it closes. */
export function h2Get(session: ClientHttp2Session, headers: OutgoingHttpHeaders): { stream: ClientHttp2Stream; answer: Promise<{ status: number; body: string }> } {
  const stream = session.request(headers, { endStream: true });
  stream.on('error', () => {});
  let status = 0;
  let body = '';
  stream.on('response', (head) => {
    status = Number(head[':status']);
  });
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    body += chunk;
  });
  const answer = new Promise<{ status: number; body: string }>((resolve) => stream.on('close', () => resolve({ status, body })));
  return { stream, answer };
}

// A collector of the tests' own: an OTLP/HTTP receiver on a free loopback port
// that keeps what Sluice exports. OTLP/JSON bodies are decoded into flat spans
// (the specification's JSON mapping: hex ids, attributes as typed values);
// protobuf bodies are kept raw. `stall` makes it accept requests and never answer.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
  service: unknown;
}

export interface OtlpReceiver {
  /** Base URL: give it as OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** Every body as it came, with its content type. */
  bodies: { type: string; body: Buffer }[];
  /** Requests that reached it (a stalled one included). */
  requests: number;
  /** The path of each request. */
  paths: string[];
  /** Resolves once `count` spans (matching `where`) have come, or rejects after `timeoutMs`. */
  waitFor(count: number, where?: (span: ReceivedSpan) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number; arrayValue?: { values?: AnyValue[] } };

function plainValue(value: AnyValue): unknown {
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(plainValue);
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.boolValue ?? value.doubleValue;
}

function attributesOf(list: { key: string; value: AnyValue }[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, plainValue(value)]));
}

interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: AnyValue }[];
  status?: { code?: number; message?: string };
}

function decode(text: string): ReceivedSpan[] {
  const body = JSON.parse(text) as { resourceSpans: { resource?: { attributes?: { key: string; value: AnyValue }[] }; scopeSpans: { spans: JsonSpan[] }[] }[] };
  return body.resourceSpans.flatMap((resource) =>
    resource.scopeSpans.flatMap((scope) =>
      scope.spans.map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId || undefined,
        name: span.name,
        kind: span.kind,
        attributes: attributesOf(span.attributes),
        status: span.status ?? {},
        service: attributesOf(resource.resource?.attributes)['service.name'],
      })),
    ),
  );
}

export async function startOtlpReceiver(options: { stall?: boolean } = {}): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: { type: string; body: Buffer }[] = [];
  const waiters = new Set<() => void>();
  const held = new Set<ServerResponse>();
  const receiver = { requests: 0, paths: [] as string[] } as OtlpReceiver;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    receiver.requests++;
    receiver.paths.push(req.url ?? '');
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (options.stall) {
        held.add(res);
        return;
      }
      const body = Buffer.concat(chunks);
      const type = req.headers['content-type'] ?? '';
      bodies.push({ type, body });
      if (type.startsWith('application/json')) spans.push(...decode(body.toString('utf8')));
      res.writeHead(200, { 'content-type': type.startsWith('application/json') ? 'application/json' : 'application/x-protobuf' }).end(type.startsWith('application/json') ? '{}' : '');
      for (const wake of waiters) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    waitFor(count: number, where: (span: ReceivedSpan) => boolean = () => true, timeoutMs = 10_000) {
      return new Promise<ReceivedSpan[]>((resolve, reject) => {
        const check = () => {
          const found = spans.filter(where);
          if (found.length < count) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`waited ${timeoutMs} ms for ${count} spans, got ${spans.filter(where).length}: ${spans.map((span) => span.name).join(', ')}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
}

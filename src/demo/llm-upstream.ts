// A tiny OpenAI-compatible upstream for the LLM token example
// (examples/llm-tokens.yaml) and its tests: POST /v1/chat/completions answers
// a JSON completion, or with `"stream": true` a `text/event-stream` whose last
// event before `[DONE]` carries `usage` (as OpenAI sends it with
// `stream_options.include_usage`). Every answer also says its usage in
// `x-usage-tokens`. Tokens are counted the simple way: one per word.
//
// For tests, the request body may ask for a given usage or a broken answer:
// `"test_usage": <any JSON>` is sent as usage.total_tokens as it is (`"omit"`
// leaves usage out), `"test_cut": true` cuts the stream before its usage event,
// `"test_status": 401` answers that status.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LlmUpstream {
  readonly url: string;
  readonly server: Server;
  /** Completions answered (a test's proof that a refused request never arrived). */
  readonly answered: number;
  close(): Promise<void>;
}

interface Completion {
  model?: unknown;
  max_tokens?: unknown;
  stream?: unknown;
  messages?: unknown;
  test_usage?: unknown;
  test_cut?: unknown;
  test_status?: unknown;
}

const WORDS = 'the quick brown fox jumps over the lazy dog'.split(' ');

export function startLlmUpstream(options: { host?: string; port?: number } = {}): Promise<LlmUpstream> {
  let answered = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      answered++;
      answerCompletion(req, res, Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', () => res.destroy());
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      const { address, port } = server.address() as AddressInfo;
      resolve({
        url: `http://${address}:${port}`,
        server,
        get answered() {
          return answered;
        },
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

/** Answers one completion request whose body is `text` (the demo upstream's `/v1/` paths answer with it too). */
export function answerCompletion(req: IncomingMessage, res: ServerResponse, text: string): void {
  let body: Completion;
  try {
    body = JSON.parse(text) as Completion;
  } catch {
    res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"the body is not JSON"}}');
    return;
  }
  if (typeof body.test_status === 'number') {
    res.writeHead(body.test_status, { 'content-type': 'application/json' }).end('{"error":{"message":"as asked"}}');
    return;
  }
  const prompt = JSON.stringify(body.messages ?? '').split(/\s+/).length;
  const completion = Math.min(typeof body.max_tokens === 'number' ? body.max_tokens : 16, 16);
  const words = Array.from({ length: completion }, (_, i) => WORDS[i % WORDS.length]!);
  const total = 'test_usage' in body ? body.test_usage : prompt + completion;
  const usage = total === 'omit' ? undefined : { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total };
  const model = typeof body.model === 'string' ? body.model : 'demo';
  const headers: Record<string, string> = typeof total === 'number' || typeof total === 'string' ? { 'x-usage-tokens': String(total) } : {};
  if (body.stream === true) stream(res, { model, words, usage, cut: body.test_cut === true, headers });
  else {
    const out = JSON.stringify({ id: 'chatcmpl-demo', object: 'chat.completion', model, choices: [{ index: 0, message: { role: 'assistant', content: words.join(' ') }, finish_reason: 'stop' }], ...(usage ? { usage } : {}) });
    res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(out);
  }
  void req;
}

/** One event per word, then the usage event and `[DONE]`; each written as it would come from a model. */
/** A streamed answer: the model's words, its usage (none: no usage event), whether it stops short (`cut`), extra headers. */
interface StreamedAnswer {
  readonly model: string;
  readonly words: string[];
  readonly usage: object | undefined;
  readonly cut: boolean;
  readonly headers: Record<string, string>;
}

function stream(res: ServerResponse, { model, words, usage, cut, headers }: StreamedAnswer): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
  const event = (data: object) => `data: ${JSON.stringify({ id: 'chatcmpl-demo', object: 'chat.completion.chunk', model, ...data })}\n\n`;
  for (const word of words) res.write(event({ choices: [{ index: 0, delta: { content: `${word} ` }, finish_reason: null }], usage: null }));
  if (cut) {
    res.write(': cut here\n', () => res.destroy()); // the connection drops before the usage event, after what was written left
    return;
  }
  res.write(event({ choices: [], ...(usage ? { usage } : {}) }));
  res.end('data: [DONE]\n\n');
}

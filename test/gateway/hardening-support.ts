// Requests sent as written (a fragment, `..`, `//`, a Host of any shape) to a
// gateway under attack, and an upstream that records what reached it.
import { request as httpRequest } from 'node:http';
import { startUpstream, type TestUpstream } from '../helpers/gateway-support.js';

export interface Sent {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** node's client with the path untouched (no URL parsing: `#x`, `/../` and `//` go as they are). */
export function sendRaw(base: string, method: string, path: string, headers: Record<string, string | string[]> = {}): Promise<Sent> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port: Number(port), method, path, headers, agent: false, setHost: !('host' in headers) }, (res) => {
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

/** An upstream that answers 200 with the path and headers it got, and remembers every path. */
export async function recordingUpstream(): Promise<TestUpstream & { paths: string[] }> {
  const paths: string[] = [];
  const upstream = await startUpstream((req, res) => {
    paths.push(req.url ?? '');
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ path: req.url, headers: req.headers }));
  });
  return Object.assign(upstream, { paths });
}

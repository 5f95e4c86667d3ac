// Small HTTP helpers for the admin API: bounded JSON bodies and the one error shape,
// `{ "error": { "code", "field", "message" } }`, its code and status from the
// catalogue (core/error-codes.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isSluiceError, SluiceError } from '../core/errors.js';

export const MAX_BODY_BYTES = 64 * 1024;

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store', ...headers });
  res.end(text);
}

/** The error body; the message without the `field: ` prefix SluiceError adds. */
export function errorBody(error: SluiceError): { error: { code: string; field: string | undefined; message: string } } {
  const prefix = error.field ? `${error.field}: ` : '';
  const message = prefix && error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
  return { error: { code: error.code, field: error.field, message } };
}

export function sendAdminError(res: ServerResponse, error: unknown): void {
  const known = isSluiceError(error) ? error : new SluiceError('ERR_INTERNAL', 'internal error');
  sendJson(res, known.status, errorBody(known));
}

/** Reads at most MAX_BODY_BYTES and parses JSON; undefined for an empty body. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw tooLarge();
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new SluiceError('ERR_BAD_REQUEST', `malformed JSON: ${(error as Error).message}`, 'body');
  }
}

function tooLarge(): SluiceError {
  return new SluiceError('ERR_BODY_TOO_LARGE', `must be at most ${MAX_BODY_BYTES} bytes`, 'body');
}

/** The request body as a plain JSON object. */
export function asObject(body: unknown, field = 'body'): Record<string, unknown> {
  if (body === undefined) throw new SluiceError('ERR_BAD_REQUEST', 'a JSON object is required', field);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new SluiceError('ERR_BAD_REQUEST', 'must be a JSON object', field);
  return body as Record<string, unknown>;
}

// The /ui routes of the admin listener: the page's static files (open: they
// hold no data) and its data endpoint (bearer token, sent as a header by the
// page's script: no cookie a cross-site request could ride on). The page gets
// its rule form's policies from the policy registry as it is first read
// (policy-form.ts). Every response
// carries a strict Content-Security-Policy: only this origin's scripts and
// styles, no inline code, no framing.
import { readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SluiceError } from '../core/errors.js';
import { sendJson } from './http-util.js';
import type { Dashboard } from './dashboard.js';
import { isRange, RANGES } from './history-view.js';
import { renderPolicyForm } from './policy-form.js';

export const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const SECURITY_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

const TYPES: Record<string, string> = { html: 'text/html; charset=utf-8', js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };
const UI_DIR = fileURLToPath(new URL('./ui/', import.meta.url));
const UPLOT_DIR = join(dirname(createRequire(import.meta.url).resolve('uplot/package.json')), 'dist');
/**
 * Path under /ui → file on disk: the page's own files (every .html, .css and .js
 * directly in ui/, listed once at start, so a new view's script needs no entry
 * here) and uPlot's two. Nothing else on disk can be asked for.
 */
const FILES: Record<string, string> = {
  '': join(UI_DIR, 'index.html'),
  ...Object.fromEntries(
    readdirSync(UI_DIR)
      .filter((name) => /^[a-z][a-z0-9-]*\.(html|css|js)$/.test(name))
      .map((name) => [name, join(UI_DIR, name)]),
  ),
  'vendor/uPlot.iife.min.js': join(UPLOT_DIR, 'uPlot.iife.min.js'),
  'vendor/uPlot.min.css': join(UPLOT_DIR, 'uPlot.min.css'),
};
const cache = new Map<string, Buffer>();

export interface UiContext {
  /** This instance's overview: its own Dashboard, or with workers the primary's view of their snapshots. */
  dashboard: (Pick<Dashboard, 'overview'> & Partial<Pick<Dashboard, 'historyOf'>>) | undefined;
  /** Throws (401/403) unless the request carries a token; any role may read the overview. */
  authorize: (req: IncomingMessage) => Promise<unknown>;
}

/** Answers a request under /ui (parts[0] === 'ui'). */
export async function serveUi(req: IncomingMessage, res: ServerResponse, parts: string[], ctx: UiContext): Promise<void> {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
  const method = req.method ?? 'GET';
  const rest = parts.slice(1).join('/');
  if (method !== 'GET' && method !== 'HEAD') throw new SluiceError('ERR_METHOD_NOT_ALLOWED', `method ${method} not allowed; use GET`, 'method');
  if (rest === 'api/overview') {
    await ctx.authorize(req);
    if (!ctx.dashboard) throw new SluiceError('ERR_NOT_FOUND', 'the dashboard is not running on this instance', 'dashboard');
    sendJson(res, 200, await ctx.dashboard.overview());
    return;
  }
  if (rest === 'api/history') {
    await ctx.authorize(req);
    const range = new URL(req.url ?? '/', 'http://x').searchParams.get('range') ?? '1h';
    if (!isRange(range)) throw new SluiceError('ERR_BAD_REQUEST', `range: must be one of ${Object.keys(RANGES).join(', ')}`, 'range');
    if (!ctx.dashboard?.historyOf) throw new SluiceError('ERR_NOT_FOUND', 'the history is not kept on this instance', 'dashboard');
    sendJson(res, 200, await ctx.dashboard.historyOf(range));
    return;
  }
  const file = Object.hasOwn(FILES, rest) ? FILES[rest] : undefined;
  if (!file) throw new SluiceError('ERR_NOT_FOUND', `no file /ui/${rest}`);
  let body = cache.get(file);
  if (!body) {
    body = file === FILES[''] ? Buffer.from(renderPolicyForm(readFileSync(file, 'utf8'))) : readFileSync(file);
    cache.set(file, body);
  }
  const type = TYPES[file.slice(file.lastIndexOf('.') + 1)] ?? 'application/octet-stream';
  res.writeHead(200, { 'content-type': type, 'content-length': body.length, 'cache-control': 'no-cache' });
  res.end(method === 'HEAD' ? undefined : body);
}

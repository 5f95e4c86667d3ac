// The /ui routes of the admin listener: the page's static files (open: they
// hold no data) and its data endpoint (bearer token, sent as a header by the
// page's script: no cookie a cross-site request could ride on). Every response
// carries a strict Content-Security-Policy: only this origin's scripts and
// styles, no inline code, no framing.
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SluiceError } from '../core/errors.js';
import { sendJson } from './http-util.js';
import type { Dashboard } from './dashboard.js';
import { isRange, RANGES } from './history-view.js';

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
/** Path under /ui → file on disk. A fixed list: nothing else on disk can be asked for. */
const FILES: Record<string, string> = {
  '': join(UI_DIR, 'index.html'),
  'index.html': join(UI_DIR, 'index.html'),
  'app.css': join(UI_DIR, 'app.css'),
  'app.js': join(UI_DIR, 'app.js'),
  'api.js': join(UI_DIR, 'api.js'),
  'live.js': join(UI_DIR, 'live.js'),
  'rules.js': join(UI_DIR, 'rules.js'),
  'keys.js': join(UI_DIR, 'keys.js'),
  'history.js': join(UI_DIR, 'history.js'),
  'instances.js': join(UI_DIR, 'instances.js'),
  'role.js': join(UI_DIR, 'role.js'),
  'overrides.js': join(UI_DIR, 'overrides.js'),
  'tenants.js': join(UI_DIR, 'tenants.js'),
  'audit.js': join(UI_DIR, 'audit.js'),
  'team.js': join(UI_DIR, 'team.js'),
  'tokens.js': join(UI_DIR, 'tokens.js'),
  'plans.js': join(UI_DIR, 'plans.js'),
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
  const file = FILES[rest];
  if (!file) throw new SluiceError('ERR_NOT_FOUND', `no file /ui/${rest}`);
  let body = cache.get(file);
  if (!body) {
    body = readFileSync(file);
    cache.set(file, body);
  }
  const type = TYPES[file.slice(file.lastIndexOf('.') + 1)] ?? 'application/octet-stream';
  res.writeHead(200, { 'content-type': type, 'content-length': body.length, 'cache-control': 'no-cache' });
  res.end(method === 'HEAD' ? undefined : body);
}

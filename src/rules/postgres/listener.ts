// A dedicated LISTEN connection for change notifications. When the connection
// drops it says so once (`disconnected`), reconnects with capped exponential
// backoff, and on success asks for a full `reload`: notifications sent while it
// was away are lost, so the cache must re-read everything. A frozen server
// closes nothing, so a heartbeat (`SELECT 1` with a timeout) is what notices it.
import pg from 'pg';
import { type PgConnection, pgClientConfig } from './connection.js';
import type { StoreChange } from '../store.js';

export const CHANNEL = 'sluice_changes';

export interface ListenerOptions {
  connectionString: string;
  /** TLS and password beside the URL, as the pool has them. */
  connection?: PgConnection | undefined;
  onChange: (change: StoreChange) => void;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** Connecting gives up after this (default 5000 ms). */
  connectTimeoutMs?: number;
  /** A heartbeat query every this often (default 5000 ms)... */
  heartbeatMs?: number;
  /** ...that must be answered within this (default 3000 ms), or the connection is dropped and remade. */
  heartbeatTimeoutMs?: number;
}

export class PgListener {
  private client: pg.Client | undefined;
  private closed = false;
  private connected = false;
  private backoffMs: number;
  private timer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(private readonly options: ListenerOptions) {
    this.backoffMs = options.minBackoffMs ?? 100;
  }

  /** Resolves after the first attempt, whether it connected or not. */
  start(): Promise<void> {
    return this.connect(false);
  }

  private async connect(isReconnect: boolean): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({
      ...pgClientConfig(this.options.connectionString, this.options.connection),
      keepAlive: true,
      connectionTimeoutMillis: this.options.connectTimeoutMs ?? 5000,
    });
    this.client = client;
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    client.on('notification', (message) => {
      if (message.channel === CHANNEL) this.options.onChange(parsePayload(message.payload));
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (error) {
      this.lost(client, error as Error);
      return;
    }
    if (this.closed || this.client !== client) return;
    this.connected = true;
    this.backoffMs = this.options.minBackoffMs ?? 100;
    this.startHeartbeat(client);
    if (isReconnect) this.options.onChange({ kind: 'reload' });
  }

  private startHeartbeat(client: pg.Client): void {
    const timeoutMs = this.options.heartbeatTimeoutMs ?? 3000;
    this.heartbeat = setInterval(() => {
      const timer = setTimeout(() => this.lost(client, new Error(`heartbeat not answered within ${timeoutMs} ms`)), timeoutMs);
      timer.unref();
      client.query('SELECT 1').then(
        () => clearTimeout(timer),
        (error: Error) => {
          clearTimeout(timer);
          this.lost(client, error);
        },
      );
    }, this.options.heartbeatMs ?? 5000);
    this.heartbeat.unref();
  }

  private lost(client: pg.Client, error: Error): void {
    if (this.closed || this.client !== client) return;
    clearInterval(this.heartbeat);
    this.client = undefined;
    client.removeAllListeners('notification');
    client.end().catch(() => {});
    if (this.connected) this.options.onChange({ kind: 'disconnected', error: error.message });
    this.connected = false;
    const delay = this.backoffMs * (0.8 + Math.random() * 0.4);
    this.backoffMs = Math.min(this.backoffMs * 2, this.options.maxBackoffMs ?? 5000);
    this.timer = setTimeout(() => void this.connect(true), delay);
    this.timer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    clearInterval(this.heartbeat);
    const client = this.client;
    this.client = undefined;
    if (client) await client.end().catch(() => {});
  }
}

function parsePayload(payload: string | undefined): StoreChange {
  try {
    const data = JSON.parse(payload ?? '') as Record<string, unknown>;
    if (data.kind === 'rule' && typeof data.tenant === 'string' && typeof data.route === 'string') {
      return { kind: 'rule', tenant: data.tenant, route: data.route };
    }
    if (data.kind === 'key' && typeof data.id === 'string') return { kind: 'key', id: data.id };
    if (data.kind === 'version' && Number.isSafeInteger(data.version)) return { kind: 'version', version: data.version as number };
    if (data.kind === 'list' && typeof data.id === 'string') return { kind: 'list', id: data.id };
    if (data.kind === 'plan' && typeof data.plan === 'string') return { kind: 'plan', plan: data.plan };
    if (data.kind === 'assignment' && (data.subject === 'tenant' || data.subject === 'key') && typeof data.id === 'string') {
      return { kind: 'assignment', subject: data.subject, id: data.id };
    }
    if (data.kind === 'override' && typeof data.limit === 'string' && typeof data.selector === 'string') {
      return { kind: 'override', limitId: data.limit, selector: data.selector };
    }
  } catch {
    // an unknown payload: fall through to a full reload, which is always correct
  }
  return { kind: 'reload' };
}

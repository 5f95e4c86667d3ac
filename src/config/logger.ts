// The process's logger as `log:` says: one human-readable line per entry
// (pino-pretty) when stdout is a terminal, JSON lines with the level's name
// (`"level":"info"`) for a collector otherwise; `log.format` (SLUICE_LOG_FORMAT,
// `sluice start --log-format`) chooses. Secrets are redacted before either
// form is written.
//
// pino-pretty runs as a stream in this thread, not as a pino transport (a
// worker thread): its output goes through an asynchronous SonicBoom on fd 1,
// so a slow terminal never blocks the event loop on a write, and formatting a
// line costs microseconds at the rate a person reads. A transport would add a
// thread per process (per worker with `workers:`) and can lose the last lines
// of a crash; the JSON form, the one for volume, stays pino's own fast path.
import { type DestinationStream, type Logger, type LoggerOptions, pino } from 'pino';
import { PinoPretty } from 'pino-pretty';
import type { LOG_FORMATS, LOG_LEVELS } from './schema.js';

export type LogLevel = (typeof LOG_LEVELS)[number];
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Fields that hold credentials wherever they appear in a log entry's first two levels. */
export const REDACTED_PATHS = [
  'password',
  'token',
  'authorization',
  'apiKey',
  '*.password',
  '*.token',
  '*.authorization',
  '*.apiKey',
  '*.headers.authorization',
  '*.headers["x-api-key"]',
  '*.headers.cookie',
];

export interface LoggerSettings {
  level: LogLevel;
  /** Absent: pretty when stdout is a terminal. */
  format?: LogFormat | undefined;
  /** Fields on every line (a worker's pid and id). */
  base?: Record<string, unknown>;
  /** Where lines go; default stdout. */
  destination?: DestinationStream;
  /** Whether the destination is a terminal; default stdout's. */
  isTerminal?: boolean;
}

/** The format a logger writes: the one asked for, else pretty on a terminal and JSON elsewhere. */
export function chooseLogFormat(format: LogFormat | undefined, isTerminal: boolean): LogFormat {
  return format ?? (isTerminal ? 'pretty' : 'json');
}

export function createLogger(settings: LoggerSettings): Logger {
  const isTerminal = settings.isTerminal ?? process.stdout.isTTY === true;
  const options: LoggerOptions = {
    level: settings.level,
    name: 'sluice',
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    ...(settings.base ? { base: settings.base } : {}),
  };
  if (chooseLogFormat(settings.format, isTerminal) === 'pretty') {
    const pretty = PinoPretty({
      colorize: isTerminal,
      singleLine: true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname,name',
      sync: false,
      ...(settings.destination ? { destination: settings.destination } : {}),
    });
    return pino(options, pretty);
  }
  const json: LoggerOptions = { ...options, formatters: { level: (label) => ({ level: label }) } };
  return settings.destination ? pino(json, settings.destination) : pino(json);
}

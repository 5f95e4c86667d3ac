// LOG_LEVEL and LOG_FORMAT as the reference reads them: with LOG_FORMAT=json
// the lines of logrus's JSON formatter as the reference configures it
// (`@timestamp` in RFC 3339, `@message`, `level` as a word), which log
// pipelines parse by those names; else logrus's text lines
// (`time=… level=warning msg="…" key=value`).
import { type Logger, pino } from 'pino';
import type { LogLevel } from '../../config/types.js';

const LEVEL_NAMES: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warning', 50: 'error', 60: 'fatal' };
const OMITTED = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'name']);

/** A value as logrus quotes it: bare when it is a plain word, else a JSON string. */
const quoted = (value: unknown): string => {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return /^[A-Za-z0-9_.:/@+-]+$/.test(text) ? text : JSON.stringify(text);
};

/** One pino JSON line as a logrus text line. */
export function textLine(json: string): string {
  const record = JSON.parse(json) as Record<string, unknown>;
  const fields = Object.entries(record)
    .filter(([key]) => !OMITTED.has(key))
    .map(([key, value]) => `${key}=${quoted(value)}`);
  const head = [`time=${quoted(new Date(record.time as number).toISOString())}`, `level=${LEVEL_NAMES[record.level as number] ?? 'info'}`, `msg=${quoted(record.msg ?? '')}`];
  return `${[...head, ...fields].join(' ')}\n`;
}

/** logrus's level names (pino's `warn` is its `warning`). */
const LOGRUS_LEVELS: Record<string, string> = { trace: 'trace', debug: 'debug', info: 'info', warn: 'warning', error: 'error', fatal: 'fatal' };

/** RFC 3339 to the second, as logrus's default TimestampFormat writes it. */
const rfc3339 = (date: Date): string => date.toISOString().replace(/\.\d{3}Z$/, 'Z');

export function referenceLogger(level: LogLevel, json: boolean): Logger {
  const options = { level, name: 'sluice' };
  if (json) {
    return pino({
      level,
      base: undefined,
      messageKey: '@message',
      timestamp: () => `,"@timestamp":"${rfc3339(new Date())}"`,
      formatters: { level: (label: string) => ({ level: LOGRUS_LEVELS[label] ?? label }) },
    });
  }
  return pino(options, { write: (line: string) => process.stdout.write(textLine(line)) });
}

// The process's logger (src/config/logger.ts): pretty lines on a terminal,
// JSON elsewhere, chosen by log.format, SLUICE_LOG_FORMAT or
// `sluice start --log-format`; level names in JSON; secrets redacted in both.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it, mock } from 'node:test';
import { command as start } from '../../src/cli/start.js';
import { ConfigError } from '../../src/config/index.js';
import { parseConfig } from '../../src/decision-service/load-config.js';
import { chooseLogFormat, createLogger, type LogFormat } from '../../src/config/logger.js';

const ROUTES = 'routes:\n  - { id: r, path: /r, upstream: "http://127.0.0.1:9" }\n';

/** A logger of `format` writing into an array; `flush` waits for pino-pretty's stream to pass the lines on. */
function capture(format: LogFormat | undefined, isTerminal = false) {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const logger = createLogger({ level: 'info', format, destination, isTerminal });
  const flush = () => new Promise((resolve) => setImmediate(resolve));
  return { logger, lines, flush };
}

const SECRETS = { password: 'hunter2-password', store: { password: 'store-pass-123', token: 'tok-abcdef-123' }, req: { headers: { authorization: 'Bearer sekrit-bearer', 'x-api-key': 'key-0123456789' } } };

describe('log format', () => {
  it('is pretty on a terminal and JSON elsewhere, unless one is asked for', () => {
    assert.equal(chooseLogFormat(undefined, true), 'pretty');
    assert.equal(chooseLogFormat(undefined, false), 'json');
    assert.equal(chooseLogFormat('json', true), 'json');
    assert.equal(chooseLogFormat('pretty', false), 'pretty');
  });

  it('is read from log.format, and SLUICE_LOG_FORMAT overrides it', () => {
    assert.equal(parseConfig(ROUTES).log.format, undefined);
    assert.equal(parseConfig(`${ROUTES}log: { format: json }\n`).log.format, 'json');
    assert.equal(parseConfig(`${ROUTES}log: { format: json }\n`, { env: { SLUICE_LOG_FORMAT: 'pretty' } }).log.format, 'pretty');
  });

  it('refuses a bad value, naming the field or the variable', () => {
    assert.throws(() => parseConfig(`${ROUTES}log: { format: xml }\n`), (error: unknown) => error instanceof ConfigError && /log\.format: must be one of pretty, json/.test(error.message));
    assert.throws(() => parseConfig(ROUTES, { env: { SLUICE_LOG_FORMAT: 'xml' } }), (error: unknown) => error instanceof ConfigError && /SLUICE_LOG_FORMAT/.test(error.message) && /log\.format/.test(error.message));
  });

  it('sluice start refuses a bad --log-format, naming the flag and the value, before reading any config', async () => {
    const written: string[] = [];
    const write = mock.method(process.stderr, 'write', (text: string) => written.push(text) > 0);
    try {
      assert.equal(await start.run(['--log-format', 'xml', '--config', '/nonexistent/sluice.yaml']), 2);
    } finally {
      write.mock.restore();
    }
    assert.match(written.join(''), /--log-format must be pretty or json, not "xml"/);
  });
});

describe('JSON lines', () => {
  it('carry the level by name', () => {
    const { logger, lines } = capture('json');
    logger.info('one');
    logger.warn('two');
    assert.deepEqual(lines.map((line) => (JSON.parse(line) as { level: unknown }).level), ['info', 'warn']);
  });

  it('redact credentials', () => {
    const { logger, lines } = capture('json');
    logger.info(SECRETS, 'connected');
    for (const secret of ['hunter2-password', 'store-pass-123', 'tok-abcdef-123', 'sekrit-bearer', 'key-0123456789']) assert.ok(!lines.join('').includes(secret), secret);
    assert.equal((JSON.parse(lines[0]!) as { password: string }).password, '[redacted]');
  });
});

describe('pretty lines', () => {
  it('are one line per entry, with the level, the message and the fields', async () => {
    const { logger, lines, flush } = capture('pretty');
    logger.warn({ route: 'orders' }, 'upstream slow');
    await flush();
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /WARN.*upstream slow.*"route":"orders"/);
    assert.ok(!lines[0]!.startsWith('{'), 'not JSON');
  });

  it('redact credentials', async () => {
    const { logger, lines, flush } = capture('pretty', true);
    logger.info(SECRETS, 'connected');
    await flush();
    assert.equal(lines.length, 1);
    for (const secret of ['hunter2-password', 'store-pass-123', 'tok-abcdef-123', 'sekrit-bearer', 'key-0123456789']) assert.ok(!lines[0]!.includes(secret), secret);
    assert.match(lines[0]!, /\[redacted\]/);
  });
});

// The bounded SSE scanner: events whole whatever the chunking, CRLF lines,
// multi-line data, an oversize event skipped without being kept.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SseScanner } from '../../src/usage/sse-scanner.js';

function scan(chunks: (string | Buffer)[], maxBytes?: number, needles: string[] = []): { events: string[]; skipped: number } {
  const events: string[] = [];
  const scanner = new SseScanner((data) => events.push(data), maxBytes, needles.map((needle) => Buffer.from(needle)));
  for (const chunk of chunks) scanner.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  scanner.end();
  return { events, skipped: scanner.skipped };
}

const STREAM = 'event: message\ndata: {"a":1}\n\n: a comment\ndata: {"usage":{"total_tokens":"é42"}}\n\ndata: [DONE]\n\n';

describe('SseScanner', () => {
  it('gives the same events however the stream is cut into chunks, a multi-byte character split included', () => {
    const bytes = Buffer.from(STREAM);
    const expected = ['{"a":1}', '{"usage":{"total_tokens":"é42"}}', '[DONE]'];
    for (let cut = 1; cut < bytes.length; cut++) assert.deepEqual(scan([bytes.subarray(0, cut), bytes.subarray(cut)]).events, expected, `cut at ${cut}`);
    assert.deepEqual(scan([...bytes].map((b) => Buffer.from([b]))).events, expected);
  });

  it('reads CRLF lines, joins multi-line data with LF, and drops an event the stream ended before its blank line', () => {
    assert.deepEqual(scan(['data: one\r\ndata: two\r\n\r\ndata: unfinished']).events, ['one\ntwo']);
  });

  it('skips an event larger than the cap, keeps scanning after it', () => {
    const big = `data: ${'x'.repeat(5000)}\n\n`;
    const { events, skipped } = scan([big.slice(0, 2000), big.slice(2000), 'data: {"usage":1}\n\n'], 1024);
    assert.deepEqual(events, ['{"usage":1}']);
    assert.equal(skipped, 1);
  });

  it('an event whose data lines together pass the cap is skipped too', () => {
    const lines = `${Array.from({ length: 20 }, () => `data: ${'y'.repeat(100)}`).join('\n')}\n\n`;
    assert.deepEqual(scan([lines, 'data: small\n\n'], 1024), { events: ['small'], skipped: 1 });
  });

  it('with needles, hands on only the events that hold one, however the stream is cut; what it hands on is not a view of a chunk', () => {
    const stream = Buffer.from('data: {"usage":null,"x":1}\n\ndata: {"usage":{"total_tokens":7}}\n\ndata: [DONE]\n\n');
    for (let cut = 1; cut < stream.length; cut++) {
      assert.deepEqual(scan([stream.subarray(0, cut), stream.subarray(cut)], undefined, ['"total_tokens"']).events, ['{"usage":{"total_tokens":7}}'], `cut at ${cut}`);
    }
    // The chunk is changed after it went on (as a pooled buffer may be): the event kept is its own copy.
    const events: string[] = [];
    const scanner = new SseScanner((data) => events.push(data), undefined, [Buffer.from('"n"')]);
    const chunk = Buffer.from('data: {"n":1}\n');
    scanner.push(chunk);
    chunk.fill(0x41);
    scanner.push(Buffer.from('\n'));
    assert.deepEqual(events, ['{"n":1}']);
  });
});

// `sluice check` and `sluice start` refuse a bad OTEL_* variable the same way,
// naming it, with exit code 2, before anything starts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { sluiceCli } from '../helpers/cli.js';

const cli = (args: string[], env: Record<string, string>) =>
  spawnSync(process.execPath, [...sluiceCli(), ...args], { encoding: 'utf8', env: { ...process.env, SLUICE_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_LISTEN: '127.0.0.1:0', ...env }, timeout: 30_000 });

describe('sluice check / start with a bad OTEL_* variable', () => {
  it('both refuse OTEL_TRACES_SAMPLER=sometimes, naming it', () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_SAMPLER: 'sometimes' };
    const checked = cli(['check', '--config', 'examples/quickstart.yaml'], env);
    const started = cli(['start', '--config', 'examples/quickstart.yaml'], env);
    assert.match(checked.stderr, /^sluice: OTEL_TRACES_SAMPLER: must be one of always_on, always_off, traceidratio/m);
    assert.equal(started.stderr.trim(), checked.stderr.trim());
    assert.deepEqual([checked.status, started.status], [2, 2]);
  });

  it('a good one passes check', () => {
    const checked = cli(['check', '--config', 'examples/quickstart.yaml'], { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' });
    assert.equal(checked.status, 0, checked.stderr);
  });
});

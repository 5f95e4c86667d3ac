// `sluice ratelimit`'s service in this process (the command's own parts):
// in-place edits and the RUNTIME_ROOT symlink swap reloaded, a bad file keeping
// the last good config, MERGE_DOMAIN_CONFIG, SHADOW_MODE, and the warning of a
// reference key out of place logged once per file; GRPC_UDS.
import assert from 'node:assert/strict';
import { mkdirSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type Logger, pino } from 'pino';
import { engineFromConfig } from '../../src/app.js';
import type { Env } from '../../src/config/env.js';
import { type RunningRatelimit, startRatelimitService } from '../../src/decision-service/reference/run.js';
import { referenceSettings } from '../../src/decision-service/reference/settings.js';
import { sluiceConfigOf } from '../../src/decision-service/reference/sluice-config.js';
import { call } from '../helpers/gateway-support.js';
import { tempDir, waitForRlconfig } from './ratelimit-support.js';
import { descriptor, rlsClient } from '../helpers/decision-service-support.js';
import { until } from '../helpers/poll.js';

const limitOf = (domain: string, perMinute: number) => `domain: ${domain}\ndescriptors:\n  - key: api_key\n    rate_limit: { unit: minute, requests_per_unit: ${perMinute} }\n`;
const PORTS = { GRPC_HOST: '127.0.0.1', GRPC_PORT: '0', HOST: '127.0.0.1', PORT: '0', DEBUG_HOST: '127.0.0.1', DEBUG_PORT: '0' };

/** Log records written by the service, parsed. */
function capturingLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { logger, lines };
}

async function startInProcess(env: Env): Promise<{ service: RunningRatelimit; lines: Record<string, unknown>[] }> {
  const settings = referenceSettings({ ...PORTS, ...env });
  const config = sluiceConfigOf(settings, env);
  const { logger, lines } = capturingLogger();
  return { service: await startRatelimitService(settings, config, engineFromConfig(config, logger), logger), lines };
}

const askJson = async (url: string, domain: string, value: string) => {
  const reply = await call(`${url}/json`, { method: 'POST', body: JSON.stringify({ domain, descriptors: [{ entries: [{ key: 'api_key', value }] }] }) });
  return { status: reply.status, body: JSON.parse(reply.body) };
};

describe('RUNTIME_WATCH_ROOT=false: files edited in place', () => {
  const root = tempDir('sluice-inplace-');
  const dir = join(root, 'config');
  mkdirSync(dir);
  writeFileSync(join(dir, 'a.yaml'), limitOf('a', 1));
  let running: Awaited<ReturnType<typeof startInProcess>> | undefined;
  after(async () => {
    await running?.service.close(0);
    rmSync(root, { recursive: true, force: true });
  });

  it('an edit, a new file and a removed file reload; a bad edit keeps the last good config, logged', async () => {
    running = await startInProcess({ RUNTIME_ROOT: root, RUNTIME_WATCH_ROOT: 'false' });
    const { service, lines } = running;
    writeFileSync(join(dir, 'a.yaml'), limitOf('a', 5));
    await waitForRlconfig(service.debugUrl, /^a\.api_key: unit=MINUTE requests_per_unit=5/);
    writeFileSync(join(dir, 'b.yaml'), limitOf('b', 6));
    await waitForRlconfig(service.debugUrl, /b\.api_key: unit=MINUTE requests_per_unit=6/);
    writeFileSync(join(dir, 'a.yaml'), 'domain: a\ndescriptors:\n  - key: api_key\n    rate_limit: { unit: minute, requests_per_unit: -1 }\n');
    await until(() => lines.some((line) => /^config folder not reloaded, the last good config stays: .*a\.yaml:4: descriptors\[0\]\.rate_limit\.requests_per_unit: must be at least 0$/.test(String(line.msg))), 'the refused reload logged', 10_000, 25);
    assert.equal((await askJson(service.httpUrl!, 'a', 'k')).body.statuses[0].currentLimit.requestsPerUnit, 5);
    unlinkSync(join(dir, 'a.yaml'));
    await waitForRlconfig(service.debugUrl, /^b\.api_key[^\n]*\n$/);
    assert.equal((await askJson(service.httpUrl!, 'a', 'k')).body.statuses[0].currentLimit, undefined, 'domain a is gone: no limit, as the reference answers an unknown domain');
  });
});

describe('RUNTIME_WATCH_ROOT (the default): RUNTIME_ROOT is a symlink, swapped to a new version', () => {
  const base = tempDir('sluice-root-swap-');
  for (const [version, perMinute] of [['v1', 3], ['v2', 8]] as const) {
    mkdirSync(join(base, version, 'ratelimit', 'config'), { recursive: true });
    writeFileSync(join(base, version, 'ratelimit', 'config', 'shop.yaml'), limitOf('shop', perMinute));
  }
  symlinkSync(join(base, 'v1'), join(base, 'current'));
  let running: Awaited<ReturnType<typeof startInProcess>> | undefined;
  after(async () => {
    await running?.service.close(0);
    rmSync(base, { recursive: true, force: true });
  });

  it('the swap reloads from the new version', async () => {
    running = await startInProcess({ RUNTIME_ROOT: join(base, 'current'), RUNTIME_SUBDIRECTORY: 'ratelimit' });
    assert.match((await call(`${running.service.debugUrl}/rlconfig`)).body, /requests_per_unit=3/);
    symlinkSync(join(base, 'v2'), join(base, 'next'));
    renameSync(join(base, 'next'), join(base, 'current'));
    await waitForRlconfig(running.service.debugUrl, /requests_per_unit=8/);
    assert.equal((await askJson(running.service.httpUrl!, 'shop', 'k')).body.statuses[0].currentLimit.requestsPerUnit, 8);
  });
});

describe('MERGE_DOMAIN_CONFIG, SHADOW_MODE and keys out of place', () => {
  const root = tempDir('sluice-merge-shadow-');
  mkdirSync(join(root, 'config'));
  writeFileSync(join(root, 'config', 'a.yaml'), limitOf('shop', 1));
  writeFileSync(join(root, 'config', 'b.yaml'), 'domain: shop\ndescriptors:\n  - key: path\n    replaces: [{ name: x }]\n    rate_limit: { unit: second, requests_per_unit: 4 }\n');
  const services: RunningRatelimit[] = [];
  after(async () => {
    await Promise.all(services.map((service) => service.close(0)));
    rmSync(root, { recursive: true, force: true });
  });

  it('merges the two files of one domain; SHADOW_MODE answers OK while the descriptor is OVER_LIMIT; the misplaced key warned once', async () => {
    const { service, lines } = await startInProcess({ RUNTIME_ROOT: root, MERGE_DOMAIN_CONFIG: 'true', SHADOW_MODE: 'true' });
    services.push(service);
    assert.equal((await call(`${service.debugUrl}/rlconfig`)).body, 'shop.api_key: unit=MINUTE requests_per_unit=1, shadow_mode: false\nshop.path: unit=SECOND requests_per_unit=4, shadow_mode: false\n');
    assert.equal((await askJson(service.httpUrl!, 'shop', 'k')).status, 200);
    const shadowed = await askJson(service.httpUrl!, 'shop', 'k');
    assert.equal(shadowed.status, 200);
    assert.deepEqual([shadowed.body.overallCode, shadowed.body.statuses[0].code], ['OK', 'OVER_LIMIT']);
    const warnings = lines.filter((line) => /ignored, as envoyproxy\/ratelimit ignores them/.test(String(line.msg)));
    assert.deepEqual(warnings.map((line) => line.msg), [`${join(root, 'config', 'b.yaml')}: ignored, as envoyproxy/ratelimit ignores them: descriptors[0].replaces (line 4) is read only in rate_limit`]);
  });
});

describe('GRPC_UDS: gRPC on a unix socket', () => {
  const root = tempDir('sluice-uds-');
  mkdirSync(join(root, 'config'));
  writeFileSync(join(root, 'config', 'shop.yaml'), limitOf('shop', 4));
  let running: Awaited<ReturnType<typeof startInProcess>> | undefined;
  after(async () => {
    await running?.service.close(0);
    rmSync(root, { recursive: true, force: true });
  });

  it('answers ShouldRateLimit on the socket instead of GRPC_HOST:GRPC_PORT', async () => {
    const socket = join(root, 'ratelimit.sock');
    running = await startInProcess({ RUNTIME_ROOT: root, GRPC_UDS: socket });
    assert.equal(running.service.grpcAddress, `unix:${socket}`);
    const client = rlsClient(`unix:${socket}`);
    try {
      const answer = await client.ask({ domain: 'shop', descriptors: [descriptor(['api_key', 'k'])] });
      assert.equal(answer.statuses[0].current_limit.requests_per_unit, 4);
    } finally {
      client.close();
    }
  });
});

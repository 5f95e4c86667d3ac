// A `read` token is refused (403) on every write endpoint: the endpoints come
// from the OpenAPI document's route table, and an endpoint missing from it is
// refused all the same (the role is decided by method, not by a list).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openApiDocument } from '../../src/admin/openapi.js';
import { EmbeddedRuleStore } from '../../src/rules/embedded/store.js';
import { startTeamAdmin, type TeamAdmin } from '../helpers/team-fixture.js';

const SAMPLE: Record<string, string> = { tenant: 'acme', route: 'orders', id: 'key_abc', limitId: 'per-ip', selector: 'ip:10.0.0.1', name: 'someone' };
const WRITES = ['put', 'post', 'patch', 'delete'];

/** Every documented method and path, with sample values in the path's parameters. */
function writeEndpoints(): { method: string; path: string }[] {
  const paths = (openApiDocument() as { paths: Record<string, Record<string, unknown>> }).paths;
  return Object.entries(paths).flatMap(([template, item]) =>
    Object.keys(item)
      .filter((method) => WRITES.includes(method))
      .map((method) => ({ method: method.toUpperCase(), path: template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(SAMPLE[name] ?? 'x')) })),
  );
}

describe('roles: a read token on every write endpoint', () => {
  let dir: string;
  let store: EmbeddedRuleStore;
  let f: TeamAdmin;
  let readToken: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-roles-'));
    store = new EmbeddedRuleStore({ dataDir: dir });
    f = await startTeamAdmin(store, async () => assert.fail('a read token must never reach the reload'));
    readToken = (await f.call('POST', '/tokens', { body: { name: 'viewer', role: 'read' } })).body.token;
    await f.call('PUT', '/rules/acme/orders', { body: { policy: 'gcra', capacity: 3, refillPerSecond: 1 } });
  });
  after(async () => {
    await f.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the route table has the write endpoints of rules, overrides, keys, tokens, buckets, reloads and plans', () => {
    const shown = new Set(writeEndpoints().map((e) => `${e.method} ${e.path.split('/')[1]}`));
    for (const expected of ['PUT rules', 'DELETE rules', 'PUT limits', 'DELETE limits', 'POST keys', 'DELETE keys', 'POST tokens', 'DELETE tokens', 'DELETE buckets', 'POST reload', 'POST plans', 'PUT plans', 'DELETE plans', 'PUT assignments', 'DELETE assignments']) {
      assert.ok(shown.has(expected), `${expected} is documented`);
    }
  });

  it('answers 403 ERR_FORBIDDEN to each, and nothing changes', async () => {
    for (const { method, path } of writeEndpoints()) {
      const answer = await f.call(method, path, { token: readToken, body: { policy: 'gcra', capacity: 1, refillPerSecond: 1, tenant: 'acme', name: 'x', role: 'admin' } });
      assert.equal(answer.status, 403, `${method} ${path}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.body.error.code, 'ERR_FORBIDDEN', `${method} ${path}`);
    }
    assert.deepEqual((await store.getRule('acme', 'orders'))?.rule, { policy: 'gcra', capacity: 3, refillPerSecond: 1 });
    assert.deepEqual((await store.team.listTokens()).map((t) => t.name), ['viewer']);
  });

  it('refuses a write to an endpoint no table lists, before finding it missing', async () => {
    const answer = await f.call('POST', '/some-new-endpoint', { token: readToken });
    assert.equal(answer.status, 403);
  });

  it('lets it read every documented GET endpoint but /tokens', async () => {
    assert.equal((await f.call('GET', '/rules', { token: readToken })).status, 200);
    assert.equal((await f.call('GET', '/audit', { token: readToken })).status, 200);
    assert.equal((await f.call('GET', '/overrides', { token: readToken })).status, 200);
    assert.equal((await f.call('GET', '/plans', { token: readToken })).status, 200);
    assert.equal((await f.call('GET', '/tokens', { token: readToken })).status, 403);
  });
});

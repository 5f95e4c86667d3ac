// The allow and deny lists on the Envoy face, over gRPC as Envoy calls it and
// on /json, with the embedded rule store: a descriptor's remote_address is
// matched against network entries, its tenant against tenant entries, an entry
// keyed by a header's name against that header entry. A deny is OVER_LIMIT for
// the whole request, with the code in the body and a header, before any
// descriptor is charged; an allow is OK with none charged; a route-scoped
// entry applies where the domain is its route; an entry added through the
// admin API applies; each is counted in sluice_list_decisions_total.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { resilienceRegistry } from '../../src/metrics/registry.js';
import { descriptor, type RlsClient, rlsClient, startDecisionSluice } from '../helpers/decision-service-support.js';
import { call } from '../helpers/gateway-support.js';
import { eventually } from '../helpers/poll.js';

const TOKEN = 'envoy-lists-admin-token-0123456789';
const domain = (name: string) => `
domain: ${name}
descriptors:
  - key: remote_address
    rate_limit: { unit: hour, requests_per_unit: 1 }
  - key: user
    rate_limit: { unit: hour, requests_per_unit: 1 }
  - key: tenant
    rate_limit: { unit: hour, requests_per_unit: 1 }
`;

const yamlFor = (files: string[]) => `
routes:
  - { id: api, path: /api, upstream: 'http://127.0.0.1:9' }
decisionService:
  envoyConfig: [${files.map((file) => JSON.stringify(file)).join(', ')}]
lists:
  - { action: deny, cidr: 203.0.113.0/24, note: a scanner network }
  - { action: allow, cidr: 203.0.113.5, note: our monitor inside it }
  - { action: deny, tenant: evil }
  - { action: deny, header: { name: User-Agent, value: BadBot/2.1 } }
  - { action: allow, tenant: partner, routes: [api] }
`;

const counted = async (outcome: string): Promise<number> => {
  const line = (await resilienceRegistry.getSingleMetricAsString('sluice_list_decisions_total')).split('\n').find((text) => text.startsWith(`sluice_list_decisions_total{outcome="${outcome}"}`));
  return line === undefined ? 0 : Number(line.split(' ').pop());
};

describe('allow and deny lists on the Envoy face', () => {
  let sluice: RunningSluice;
  let client: RlsClient;
  let dir: string;
  const ask = (name: string, ...descriptors: [string, string][][]) => client.ask({ domain: name, descriptors: descriptors.map((pairs) => descriptor(...pairs)) });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-envoy-lists-'));
    writeFileSync(join(dir, 'api.yaml'), domain('api'));
    writeFileSync(join(dir, 'other.yaml'), domain('other'));
    const env = { SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_DATA_DIR: join(dir, 'data') };
    sluice = await startDecisionSluice(yamlFor([join(dir, 'api.yaml'), join(dir, 'other.yaml')]), env, { ruleStore: true, admin: true });
    client = rlsClient(sluice.grpcAddress!);
  });
  after(async () => {
    client?.close();
    await sluice?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a denied remote_address: OVER_LIMIT for the whole request, the code in the body and a header, no descriptor charged', async () => {
    const before = await counted('denied');
    const denied = await ask('api', [['remote_address', '203.0.113.9']], [['user', 'ann']]);
    assert.equal(denied.overall_code, 'OVER_LIMIT');
    assert.deepEqual(
      denied.statuses.map((status: { code: string }) => status.code),
      ['OVER_LIMIT', 'OVER_LIMIT'],
    );
    assert.equal(Buffer.from(denied.raw_body).toString(), '{"error":"denied"}', 'the code, never the entry');
    assert.deepEqual(
      denied.response_headers_to_add.map((header: { key: string; value: string }) => [header.key, header.value]),
      [['x-sluice-denied', 'denied']],
    );
    assert.equal(await counted('denied'), before + 1);
    const unlisted = await ask('api', [['remote_address', '192.0.2.1']], [['user', 'ann']]);
    assert.equal(unlisted.overall_code, 'OK', "ann's bucket was not charged by the denied request");
    assert.equal((await ask('api', [['user', 'ann']])).overall_code, 'OVER_LIMIT', 'an unlisted request is limited');
  });

  it('an allowed address inside the denied network: OK, no limit decided, none charged', async () => {
    const before = await counted('allowlisted');
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await ask('api', [['remote_address', '203.0.113.5']], [['user', 'bob']]));
    assert.deepEqual(
      answers.map((answer) => answer.overall_code),
      ['OK', 'OK', 'OK'],
    );
    assert.deepEqual(answers[0].statuses, [{ code: 'OK' }, { code: 'OK' }], 'no limit reported');
    assert.equal(answers[0].response_headers_to_add, undefined, 'no rate-limit headers');
    assert.equal(await counted('allowlisted'), before + 3);
    assert.equal((await ask('api', [['user', 'bob']])).overall_code, 'OK', "bob's bucket was not charged");
  });

  it('a tenant entry and a header entry (a descriptor key naming the header, any case)', async () => {
    assert.equal((await ask('api', [['tenant', 'evil']])).overall_code, 'OVER_LIMIT');
    assert.equal(Buffer.from((await ask('other', [['tenant', 'evil'], ['user', 'cid']])).raw_body).toString(), '{"error":"denied"}');
    assert.equal((await ask('api', [['user-agent', 'BadBot/2.1']], [['user', 'dan']])).overall_code, 'OVER_LIMIT');
    assert.equal((await ask('api', [['User-Agent', 'BadBot/2.1']])).overall_code, 'OVER_LIMIT');
    const other = await ask('api', [['user-agent', 'GoodBot/1.0']], [['user', 'dan']]);
    assert.equal(other.overall_code, 'OK', 'another value: the limits decide');
    assert.equal(other.raw_body, undefined, 'no body');
  });

  it('a route-scoped entry applies where the domain is its route, not on another domain', async () => {
    const api = [];
    for (let i = 0; i < 2; i++) api.push((await ask('api', [['tenant', 'partner']])).overall_code);
    assert.deepEqual(api, ['OK', 'OK']);
    const other = [];
    for (let i = 0; i < 2; i++) other.push((await ask('other', [['tenant', 'partner']])).overall_code);
    assert.deepEqual(other, ['OK', 'OVER_LIMIT']);
  });

  it('the /json face answers a deny 429 with the body in rawBody', async () => {
    const reply = await call(`${sluice.decisionUrl}/json`, { method: 'POST', body: JSON.stringify({ domain: 'api', descriptors: [descriptor(['remote_address', '203.0.113.77'])] }) });
    assert.equal(reply.status, 429);
    const body = JSON.parse(reply.body);
    assert.equal(body.overallCode, 'OVER_LIMIT');
    assert.equal(Buffer.from(body.rawBody, 'base64').toString(), '{"error":"denied"}');
  });

  it('an entry added through the admin API applies on the Envoy face', async () => {
    assert.equal((await ask('api', [['remote_address', '198.51.100.7']])).overall_code, 'OK');
    const added = await call(`${sluice.adminUrl}/lists`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'deny', cidr: '198.51.100.0/24' }),
    });
    assert.equal(added.status, 201, added.body);
    await eventually(async () => assert.equal((await ask('api', [['remote_address', '198.51.100.8']])).overall_code, 'OVER_LIMIT'), 2000);
    assert.equal(Buffer.from((await ask('api', [['remote_address', '198.51.100.9']])).raw_body).toString(), '{"error":"denied"}');
  });
});

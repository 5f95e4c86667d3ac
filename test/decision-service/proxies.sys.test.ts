// The seed's curl loop through the real nginx (auth_request) and the real Caddy
// (forward_auth), each started from the example file as it is (ports
// substituted) in front of an upstream, asking a Sluice started from
// examples/decision/sluice.yaml: 200 200 429, Retry-After on the 429, and the
// X-RateLimit-* headers reaching the client on every answer.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { startUpstream, type TestUpstream } from '../helpers/gateway-support.js';
import { freePort } from '../helpers/ports.js';
import { exampleSluiceYaml, type RunningProxy, startCaddy, startDecisionSluice, startNginx, threePosts } from '../helpers/decision-service-support.js';

const portOf = (url: string) => Number(new URL(url).port);

function assertSeedLoop(replies: Awaited<ReturnType<typeof threePosts>>): void {
  assert.deepEqual(
    replies.map((reply) => reply.status),
    [200, 200, 429],
  );
  assert.deepEqual(
    replies.map((reply) => reply.headers['x-ratelimit-remaining']),
    ['1', '0', '0'],
  );
  for (const reply of replies) assert.equal(reply.headers['x-ratelimit-limit'], '2');
  assert.match(String(replies[0]!.headers['x-ratelimit-reset']), /^\d+$/);
  assert.match(String(replies[2]!.headers['retry-after']), /^[1-9]\d*$/, 'the 429 carries Retry-After');
  assert.equal(replies[0]!.body.includes('/orders'), true, 'an allowed request reached the upstream');
}

describe('forward-auth through the real proxies, from the example files', () => {
  let upstream: TestUpstream;
  const started: { sluice?: RunningSluice; proxy?: RunningProxy }[] = [];
  before(async () => {
    upstream = await startUpstream();
  });
  after(async () => {
    for (const { sluice, proxy } of started) await Promise.allSettled([proxy?.stop(), sluice?.close()]);
    await upstream.close();
  });

  it('nginx 1.22 with auth_request (Sluice answering 403, nginx mapping it to 429)', async () => {
    const sluice = await startDecisionSluice(exampleSluiceYaml(), { UPSTREAM_URL: upstream.url, SLUICE_REFUSED_STATUS: '403' });
    const entry: { sluice?: RunningSluice; proxy?: RunningProxy } = { sluice };
    started.push(entry);
    entry.proxy = await startNginx({ listen: await freePort(), sluice: portOf(sluice.decisionUrl!), upstream: portOf(upstream.url) });
    const replies = await threePosts(entry.proxy.url);
    assertSeedLoop(replies);
    assert.equal(replies[2]!.body, '{"error":"rate_limited"}');
  });

  it('Caddy 2.6 with forward_auth (Sluice answering 429, passed through)', async () => {
    const sluice = await startDecisionSluice(exampleSluiceYaml(), { UPSTREAM_URL: upstream.url, SLUICE_FORWARD_AUTH_PROXY: 'caddy' });
    const entry: { sluice?: RunningSluice; proxy?: RunningProxy } = { sluice };
    started.push(entry);
    entry.proxy = await startCaddy({ listen: await freePort(), sluice: portOf(sluice.decisionUrl!), upstream: portOf(upstream.url) });
    const replies = await threePosts(entry.proxy.url);
    assertSeedLoop(replies);
    assert.match(replies[2]!.body, /"error":"rate_limited"/);
  });
});

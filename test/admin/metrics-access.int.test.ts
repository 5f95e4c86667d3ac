// admin.metrics: /metrics open on the admin listener (the default), behind a
// token whose role may read, or on a listener of its own (the admin listener
// then answers 404 for it). The trace export's counters are among its series.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { freePort } from '../helpers/ports.js';
import { startAdminFixture, TOKEN } from '../helpers/admin-fixture.js';

async function get(url: string, token?: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  return { status: res.status, text: await res.text() };
}

describe('admin.metrics: who may read /metrics, and where', () => {
  it('by default open on the admin listener, the trace export counters included', async () => {
    const f = await startAdminFixture();
    try {
      const reply = await get(`${f.admin.url}/metrics`);
      assert.equal(reply.status, 200);
      assert.match(reply.text, /sluice_trace_spans_dropped_total\{reason="queue_full"\} \d+/);
      assert.match(reply.text, /sluice_trace_spans_exported_total \d+/);
    } finally {
      await f.close();
    }
  });

  it('requireToken: 401 without a token, 403 for a bad one, 200 with a read token', async () => {
    const f = await startAdminFixture(TOKEN, { metricsAccess: { listen: undefined, requireToken: true } });
    try {
      const created = await f.call('POST', '/tokens', { body: { name: 'prometheus', role: 'read' } });
      assert.equal(created.status, 201);
      assert.equal((await get(`${f.admin.url}/metrics`)).status, 401);
      assert.equal((await get(`${f.admin.url}/metrics`, 'not-a-token-at-all-0000')).status, 401);
      const reply = await get(`${f.admin.url}/metrics`, created.body.token);
      assert.equal(reply.status, 200);
      assert.match(reply.text, /sluice_trace_spans_dropped_total/);
      assert.equal((await get(`${f.admin.url}/healthz`)).status, 200, 'the probes stay open');
    } finally {
      await f.close();
    }
  });

  it('listen: served on its own listener, the admin listener answers 404 for it', async () => {
    const port = await freePort();
    const f = await startAdminFixture(TOKEN, { metricsAccess: { listen: { host: '127.0.0.1', port }, requireToken: false } });
    try {
      assert.equal(f.admin.metricsUrl, `http://127.0.0.1:${port}`);
      assert.equal((await get(`${f.admin.url}/metrics`, TOKEN)).status, 404);
      const reply = await get(`${f.admin.metricsUrl}/metrics`);
      assert.equal(reply.status, 200);
      assert.match(reply.text, /sluice_trace_spans_dropped_total/);
      assert.equal((await get(`${f.admin.metricsUrl}/rules`)).status, 404, 'that listener serves /metrics only');
    } finally {
      await f.close();
    }
  });

  it('listen and requireToken: its own listener asks for the read token too', async () => {
    const port = await freePort();
    const f = await startAdminFixture(TOKEN, { metricsAccess: { listen: { host: '127.0.0.1', port }, requireToken: true } });
    try {
      assert.equal((await get(`http://127.0.0.1:${port}/metrics`)).status, 401);
      assert.equal((await get(`http://127.0.0.1:${port}/metrics`, TOKEN)).status, 200);
    } finally {
      await f.close();
    }
  });
});

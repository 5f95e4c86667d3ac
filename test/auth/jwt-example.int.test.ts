// examples/jwt.yaml exactly as shipped, through the real gateway and the demo
// upstream, with a JWK set served by the test as the identity provider.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startSluice } from '../../src/app.js';
import { loadConfig } from '../../src/decision-service/load-config.js';
import { freePort } from '../helpers/ports.js';
import { call, silent } from '../helpers/gateway-support.js';
import { startJwks } from '../helpers/jwks-server.js';
import { sign, testKey } from '../helpers/jwt-support.js';

describe('examples/jwt.yaml', () => {
  it("the tenant's rule from org_id, a limit per sub, /health without a token, an expired token refused", async () => {
    const key = await testKey('ES256', 'ec-1');
    const jwks = await startJwks([key.publicJwk]);
    const port = await freePort();
    const config = loadConfig('examples/jwt.yaml', { SLUICE_LISTEN: '127.0.0.1:0', UPSTREAM_URL: `http://127.0.0.1:${port}`, JWKS_URL: jwks.url, JWT_ISSUER: 'https://idp.test/' });
    const app = await startSluice(config, { demoUpstream: { port }, logger: silent });
    try {
      const url = `${app.url}/api/orders`;
      const token = (claims: Record<string, unknown>) => sign(key, claims, { audience: 'orders-api' }).then((jwt) => ({ authorization: `Bearer ${jwt}` }));
      // acme's rule holds 3: its users together get three, whoever they are.
      const acme = [await token({ org_id: 'acme', sub: 'a1', plan: 'pro' }), await token({ org_id: 'acme', sub: 'a2' })];
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await call(url, { headers: acme[i % 2]! })).status);
      assert.deepEqual(statuses, [200, 200, 200, 429]);
      // Globex runs on the default rule (20), but one user of it has 5.
      const g1 = await token({ org_id: 'globex', sub: 'g1' });
      const own = [];
      for (let i = 0; i < 6; i++) own.push((await call(url, { headers: g1 })).status);
      assert.deepEqual(own, [200, 200, 200, 200, 200, 429]);
      assert.equal((await call(url, { headers: await token({ org_id: 'globex', sub: 'g2' }) })).status, 200);
      assert.equal((await call(`${app.url}/health`)).status, 200);
      const expired = await call(url, { headers: { authorization: `Bearer ${await sign(key, { org_id: 'acme', sub: 'a1' }, { audience: 'orders-api', expiresIn: -3600 })}` } });
      assert.equal(expired.status, 401);
      assert.equal(expired.headers['www-authenticate'], 'Bearer error="invalid_token", error_description="the token has expired (exp)"');
      assert.equal(JSON.parse(expired.body).reason, 'expired');
      // With the default limits.maxHeaderBytes (16 KiB), a 64 KB token never reaches the verifier: node answers 431.
      const huge = await call(url, { headers: { authorization: `Bearer ${'a'.repeat(65_536)}` } }).catch(() => ({ status: 431 }));
      assert.equal(huge.status, 431);
    } finally {
      await app.close();
      await jwks.close();
    }
  });
});

// npm run bench:jwt [-- --quick]
// What verifying a JWT costs: first the gateway's verifier alone (CPU µs per
// token, key cached: HS256, RS256 from a JWKS URL on loopback, ES256, EdDSA),
// each token verified by jose every time (the cache of verified tokens off) and
// answered from that cache (a client sending the same token again), then whole
// requests through an in-process gateway on the memory store, without auth,
// with each algorithm (cache on, as configured by default) and RS256 with the
// cache off: CPU µs per request of this one process (load client, gateway and
// upstream together, so the difference between rows is what auth adds) and
// requests/s.
// Rows run in turns (A B C … A B C …), medians of the repeats.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { pino } from 'pino';
import { Pool } from 'undici';
import { startSluice } from '../src/app.js';
import { JwtVerifier } from '../src/auth/jwt-verifier.js';
import { parseConfig } from '../src/decision-service/load-config.js';
import { isMain, runMain } from './lib/cleanup.js';
import { median, round } from './lib/latency.js';
import { type BenchOptions, parseOptions, pick } from './lib/options.js';
import { textTable } from './lib/table.js';

const SECRET = 'bench-secret-of-at-least-thirty-two-bytes';
const ISSUER = 'https://idp.bench/';
type Alg = 'HS256' | 'RS256' | 'ES256' | 'EdDSA';
const ALGS: readonly Alg[] = ['HS256', 'RS256', 'ES256', 'EdDSA'];

interface Signer {
  alg: Alg;
  jwk?: JWK;
  sign(sub: string): Promise<string>;
}

async function signer(alg: Alg): Promise<Signer> {
  const claims = (sub: string) => new SignJWT({ sub }).setIssuer(ISSUER).setAudience('bench').setIssuedAt().setExpirationTime('1h');
  if (alg === 'HS256') return { alg, sign: (sub) => claims(sub).setProtectedHeader({ alg }).sign(new TextEncoder().encode(SECRET)) };
  const { privateKey, publicKey } = await generateKeyPair(alg, alg === 'EdDSA' ? { crv: 'Ed25519', extractable: true } : { extractable: true });
  const kid = `${alg}-1`;
  return { alg, jwk: { ...(await exportJWK(publicKey)), kid, alg }, sign: (sub) => claims(sub).setProtectedHeader({ alg, kid }).sign(privateKey) };
}

function serveJwks(keys: JWK[]): Promise<{ url: string; server: Server }> {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys })));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`, server })));
}

const authOf = (alg: Alg, jwksUrl: string, cache = '') =>
  alg === 'HS256'
    ? `{ kind: jwt, algorithms: [HS256], secretEnv: BENCH_SECRET, issuer: ${ISSUER}, audience: bench${cache} }`
    : `{ kind: jwt, algorithms: [${alg}], jwksUrl: ${jwksUrl}, issuer: ${ISSUER}, audience: bench${cache} }`;
const NO_CACHE = ', cache: { maxEntries: 0 }';

function yaml(upstream: string, jwksUrl: string): string {
  const route = (id: string, auth: string) =>
    `  - { id: ${id}, path: /${id}, upstream: ${upstream}, anonymous: true, auth: ${auth}, limits: [{ id: ${id}-ceiling, key: route, rule: { policy: fixed_window, limit: 1000000000, windowMs: 60000 } }] }`;
  const routes = [route('none', 'none'), ...ALGS.map((alg) => route(alg.toLowerCase(), authOf(alg, jwksUrl))), route('rs256-uncached', authOf('RS256', jwksUrl, NO_CACHE))];
  return `routes:\n${routes.join('\n')}\n`;
}

/** CPU µs per identify() of one cached-key token, over `count` calls (CPU, not wall time: a busy machine's waits are left out). */
async function verifyCost(verifier: JwtVerifier, token: string, count: number): Promise<number> {
  const headers = { authorization: `Bearer ${token}` };
  for (let i = 0; i < 200; i++) await verifier.identify(headers); // fetches the JWK set once, warms the JIT
  const cpu = process.cpuUsage();
  for (let i = 0; i < count; i++) await verifier.identify(headers);
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / count;
}

/** `connections` loops sending GETs for `ms`; CPU µs of this process per request, and requests/s. */
async function load(pool: Pool, path: string, token: string | undefined, ms: number, connections: number) {
  const headers = token ? { authorization: `Bearer ${token}` } : {};
  const cpu = process.cpuUsage();
  const started = Date.now();
  let done = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() - started < ms) {
        const reply = await pool.request({ path, method: 'GET', headers });
        await reply.body.dump();
        if (reply.statusCode === 200) done++;
        else failed++;
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  if (failed > 0) throw new Error(`${path}: ${failed} requests not answered 200`);
  return { cpuUs: (used.user + used.system) / done, rps: (done * 1000) / (Date.now() - started) };
}

export async function runJwtBench(options: BenchOptions) {
  const signers = await Promise.all(ALGS.map(signer));
  const jwks = await serveJwks(signers.flatMap((s) => (s.jwk ? [s.jwk] : [])));
  const upstream = createServer((_req, res) => res.writeHead(200, { 'content-length': '2' }).end('ok'));
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', () => resolve()));
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const config = parseConfig(yaml(upstreamUrl, jwks.url), { source: 'bench-jwt.yaml', env: { SLUICE_LISTEN: '127.0.0.1:0', BENCH_SECRET: SECRET } });
  const app = await startSluice(config, { logger: pino({ level: 'silent' }) });
  const pool = new Pool(app.url, { connections: 16 });
  try {
    const tokens = new Map(await Promise.all(signers.map(async (s) => [s.alg, await s.sign('user-1')] as const)));
    const verifyRows = [];
    const count = pick(options, 2_000, 20_000);
    for (const alg of ALGS) {
      const auth = config.routes.find((r) => r.id === alg.toLowerCase())!.auth!;
      const uncached = await verifyCost(new JwtVerifier({ ...auth, cache: { ...auth.cache, maxEntries: 0 } }), tokens.get(alg)!, count);
      verifyRows.push([alg, round(uncached, 1), round(await verifyCost(new JwtVerifier(auth), tokens.get(alg)!, count), 1)]);
    }
    const repeats = pick(options, 2, 5);
    const ms = pick(options, 700, 3_000);
    const targets: [string, string, string | undefined][] = [
      ['no auth', '/none', undefined],
      ...ALGS.map((alg): [string, string, string] => [alg, `/${alg.toLowerCase()}`, tokens.get(alg)!]),
      ['RS256, cache off', '/rs256-uncached', tokens.get('RS256')!],
    ];
    const runs = new Map<string, { cpuUs: number[]; rps: number[] }>(targets.map(([name]) => [name, { cpuUs: [], rps: [] }]));
    for (const [, path, token] of targets) await load(pool, path, token, 200, 16); // warm-up
    for (let r = 0; r < repeats; r++) {
      for (const [name, path, token] of targets) {
        const result = await load(pool, path, token, ms, 16);
        runs.get(name)!.cpuUs.push(result.cpuUs);
        runs.get(name)!.rps.push(result.rps);
      }
    }
    const base = median(runs.get('no auth')!.cpuUs);
    const requestRows = targets.map(([name]) => {
      const { cpuUs, rps } = runs.get(name)!;
      return [name, round(median(cpuUs), 1), round(median(cpuUs) - base, 1), Math.round(median(rps))];
    });
    return { verifyRows, requestRows, repeats, ms };
  } finally {
    await pool.close();
    await app.close();
    await new Promise((resolve) => upstream.close(resolve));
    await new Promise((resolve) => jwks.server.close(resolve));
  }
}

if (isMain(import.meta.url)) {
  void runMain(async () => {
    const result = await runJwtBench(parseOptions());
    process.stdout.write(`JWT verification alone (JwtVerifier.identify, key cached), CPU µs per token:\n${textTable(['algorithm', 'verified by jose', 'from the verified-token cache'], result.verifyRows)}\n\n`);
    process.stdout.write(
      `Requests through the gateway (memory store, 16 connections, one token per row sent again and again (cached but the cache-off row), ${result.repeats} × ${result.ms} ms per row, medians; CPU of the one process holding client, gateway and upstream):\n${textTable(['auth', 'CPU µs/request', 'added by auth', 'requests/s'], result.requestRows)}\n`,
    );
  });
}

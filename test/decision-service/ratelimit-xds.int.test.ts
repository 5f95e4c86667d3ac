// CONFIG_TYPE=GRPC_XDS_SOTW: `sluice ratelimit` behind an xDS management server
// the test runs with grpc-js (ADS, state of the world): the first config
// before it listens, a new version applied without a restart and ACKed, a bad
// one NACKed with the last good kept, the server gone and back.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { loadAds, RATE_LIMIT_CONFIG_TYPE_URL } from '../../src/decision-service/proto-files.js';
import { encodeRateLimitConfig } from '../../src/decision-service/reference/xds-resources.js';
import { freePort } from '../helpers/ports.js';
import { type RatelimitProcess, startRatelimitProcess, tempDir, waitForRlconfig } from './ratelimit-support.js';
import { descriptor, rlsClient } from '../helpers/decision-service-support.js';
import { makeTestCerts } from './tls-certs.js';
import { until } from '../helpers/poll.js';

// biome-ignore lint/suspicious/noExplicitAny: requests are plain decoded data
type Request = any;

/** A management server: answers each new stream with the current state, pushes new ones to every stream, records what clients send. */
class ManagementServer {
  readonly requests: Request[] = [];
  private server = new grpc.Server();
  private streams = new Set<grpc.ServerDuplexStream<Request, unknown>>();
  private state: { version: string; value: Uint8Array } | undefined;
  private nonce = 0;

  constructor(
    readonly port: number,
    private readonly credentials = grpc.ServerCredentials.createInsecure(),
  ) {}

  async start(): Promise<void> {
    this.server = new grpc.Server();
    this.server.addService(loadAds().service, {
      StreamAggregatedResources: (stream: grpc.ServerDuplexStream<Request, unknown>) => {
        this.streams.add(stream);
        stream.on('data', (request: Request) => {
          this.requests.push(request);
          if (!request.response_nonce && this.state) this.send(stream);
        });
        stream.on('error', () => this.streams.delete(stream));
        stream.on('end', () => this.streams.delete(stream));
      },
    });
    await new Promise<void>((done, fail) => this.server.bindAsync(`127.0.0.1:${this.port}`, this.credentials, (error) => (error ? fail(error) : done())));
  }

  push(version: string, rateLimit: unknown): void {
    this.pushBytes(version, encodeRateLimitConfig({ name: 'shop-config', domain: 'shop', descriptors: [{ key: 'api_key', rate_limit: rateLimit as never }] }));
  }

  /** A resource of these bytes, whether or not they are a RateLimitConfig. */
  pushBytes(version: string, value: Uint8Array): void {
    this.state = { version, value };
    for (const stream of this.streams) this.send(stream);
  }

  stop(): void {
    this.server.forceShutdown();
    this.streams.clear();
  }

  private send(stream: grpc.ServerDuplexStream<Request, unknown>): void {
    const value = Buffer.from(this.state!.value);
    stream.write({ version_info: this.state!.version, nonce: `n${++this.nonce}`, type_url: RATE_LIMIT_CONFIG_TYPE_URL, resources: [{ type_url: RATE_LIMIT_CONFIG_TYPE_URL, value }] });
  }
}

describe('sluice ratelimit with CONFIG_TYPE=GRPC_XDS_SOTW', () => {
  let management: ManagementServer;
  let service: RatelimitProcess;
  before(async () => {
    management = new ManagementServer(await freePort());
    await management.start();
    management.push('1', { unit: 'MINUTE', requests_per_unit: 2 });
    service = await startRatelimitProcess({
      CONFIG_TYPE: 'GRPC_XDS_SOTW',
      CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${management.port}`,
      CONFIG_GRPC_XDS_NODE_ID: 'sluice-test',
      CONFIG_GRPC_XDS_NODE_METADATA: 'team=payments,zone=eu-1',
      XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: '100ms',
      XDS_CLIENT_BACKOFF_MAX_INTERVAL: '200ms',
    });
  });
  after(async () => {
    await service?.stop();
    management?.stop();
  });

  const limitAnswered = async (value: string) => {
    const client = rlsClient(service.grpc);
    try {
      return (await client.ask({ domain: 'shop', descriptors: [descriptor(['api_key', value])] })).statuses[0].current_limit?.requests_per_unit;
    } finally {
      client.close();
    }
  };

  it('listens with the first config, sent as node sluice-test for the RateLimitConfig type, and ACKs it', async () => {
    assert.equal(await limitAnswered('k1'), 2);
    const first = management.requests[0];
    assert.deepEqual([first.node.id, first.type_url], ['sluice-test', RATE_LIMIT_CONFIG_TYPE_URL]);
    assert.deepEqual(first.node.metadata, { fields: { team: { stringValue: 'payments' }, zone: { stringValue: 'eu-1' } } }, 'string values, as the reference sends them');
    await until(() => management.requests.some((request) => request.version_info === '1' && request.response_nonce === 'n1'), 'ACK of version 1', 10_000, 25);
  });

  it('a new version is applied without a restart; a bad one is NACKed and the last good stays', async () => {
    management.push('2', { unit: 'MINUTE', requests_per_unit: 5 });
    await waitForRlconfig(service.debug, /requests_per_unit=5/);
    assert.equal(await limitAnswered('k2'), 5);
    management.push('3', { unit: 'UNKNOWN', requests_per_unit: 7 });
    await until(() => management.requests.some((request) => request.error_detail), 'a NACK', 10_000, 25);
    const nack = management.requests.find((request) => request.error_detail);
    assert.equal(nack.version_info, '2');
    assert.match(nack.error_detail.message, /^xds:shop-config: descriptors\[0\]\.rate_limit\.unit: invalid rate limit unit ''/);
    assert.equal(await limitAnswered('k3'), 5);
  });

  it('resource bytes that are not a RateLimitConfig: NACKed with the decode error, the last good version kept', async () => {
    const from = management.requests.length;
    // field 15 with wire type 7: no protobuf message has it
    management.pushBytes('bad', Buffer.from([0x7f, 0x01]));
    await until(() => management.requests.slice(from).some((request) => request.error_detail), 'a NACK of the undecodable resource', 10_000, 25);
    const nack = management.requests.slice(from).find((request) => request.error_detail);
    assert.equal(nack.version_info, '2');
    assert.match(nack.error_detail.message, /^resources\[0\]: not a RateLimitConfig: /);
    assert.equal(await limitAnswered('k3b'), 5);
  });

  it('the server gone: the last good config serves; back: its state is applied', async () => {
    const from = service.logs.length;
    management.stop();
    await service.waitForLog(/^xDS stream lost, the last good config stays/, from);
    assert.equal(await limitAnswered('k4'), 5);
    management.push('4', { unit: 'HOUR', requests_per_unit: 9 });
    await management.start();
    await waitForRlconfig(service.debug, /unit=HOUR requests_per_unit=9/);
    assert.equal(await limitAnswered('k5'), 9);
  });
});

describe('CONFIG_GRPC_XDS_SERVER_USE_TLS: the xDS stream over mutual TLS', () => {
  const dir = tempDir('sluice-xds-tls-');
  const cleanup: (() => unknown)[] = [];
  after(async () => {
    for (const step of cleanup.reverse()) await step();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the server’s CA, a client certificate it requires, and the SAN its certificate must carry', async () => {
    const certs = makeTestCerts(dir);
    const credentials = grpc.ServerCredentials.createSsl(certs.pem('ca'), [{ private_key: certs.key('server'), cert_chain: certs.pem('server') }], true);
    const management = new ManagementServer(await freePort(), credentials);
    await management.start();
    cleanup.push(() => management.stop());
    management.push('1', { unit: 'DAY', requests_per_unit: 3 });
    const service = await startRatelimitProcess({
      CONFIG_TYPE: 'GRPC_XDS_SOTW',
      CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${management.port}`,
      CONFIG_GRPC_XDS_SERVER_USE_TLS: 'true',
      CONFIG_GRPC_XDS_SERVER_TLS_CACERT: join(dir, 'ca.pem'),
      CONFIG_GRPC_XDS_CLIENT_TLS_CERT: join(dir, 'client.pem'),
      CONFIG_GRPC_XDS_CLIENT_TLS_KEY: join(dir, 'client.key'),
      CONFIG_GRPC_XDS_SERVER_TLS_SAN: 'localhost',
    });
    cleanup.push(() => service.stop());
    assert.match((await waitForRlconfig(service.debug, /unit=DAY/)), /^shop\.api_key: unit=DAY requests_per_unit=3/);
  });
});

// CONFIG_TYPE=GRPC_XDS_SOTW: rate limit configs streamed from an xDS management
// server over ADS, state of the world. Each response is every config there
// is: applied whole, then ACKed (its version and nonce); one that does not
// load is NACKed with why, and the last good config stays. When the stream
// breaks, the client reconnects with a growing pause; the last good config
// serves meanwhile.
import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { loadAds, RATE_LIMIT_CONFIG_TYPE_URL } from '../proto-files.js';
import { decodeRateLimitConfig, type RateLimitConfigMessage } from './xds-resources.js';

export interface XdsSettings {
  serverUrl: string;
  nodeId: string;
  nodeMetadata: Record<string, string>;
  /** Extra gRPC metadata on the stream (CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS). */
  headers: Record<string, string>;
  initialBackoffMs: number;
  maxBackoffMs: number;
  /** TLS to the server (PEM text): its CA, a client certificate and key, the name its certificate must carry. */
  tls: { ca?: string; cert?: string; key?: string; san?: string } | undefined;
}

interface DiscoveryResponse {
  version_info?: string;
  nonce?: string;
  type_url?: string;
  resources?: { type_url?: string; value?: Uint8Array }[];
}

/** `apply` returns undefined when the configs are in use, else why not (the NACK's message). */
export type ApplyConfigs = (configs: RateLimitConfigMessage[], version: string) => string | undefined;

export class XdsClient {
  private readonly client: grpc.Client & { StreamAggregatedResources(metadata: grpc.Metadata): grpc.ClientDuplexStream<unknown, DiscoveryResponse> };
  private stream: grpc.ClientDuplexStream<unknown, DiscoveryResponse> | undefined;
  private acceptedVersion = '';
  private backoffMs: number;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly settings: XdsSettings,
    private readonly apply: ApplyConfigs,
    private readonly logger: Logger,
  ) {
    const { Client } = loadAds();
    const tls = settings.tls;
    const credentials = tls ? grpc.credentials.createSsl(tls.ca ? Buffer.from(tls.ca) : null, tls.key ? Buffer.from(tls.key) : null, tls.cert ? Buffer.from(tls.cert) : null) : grpc.credentials.createInsecure();
    const options = tls?.san ? { 'grpc.ssl_target_name_override': tls.san } : {};
    this.client = new Client(settings.serverUrl, credentials, options) as unknown as typeof this.client;
    this.backoffMs = settings.initialBackoffMs;
  }

  start(): void {
    const metadata = new grpc.Metadata();
    for (const [key, value] of Object.entries(this.settings.headers)) metadata.set(key, value);
    const stream = this.client.StreamAggregatedResources(metadata);
    this.stream = stream;
    stream.on('data', (response: DiscoveryResponse) => this.received(response));
    stream.on('error', (error: grpc.ServiceError) => this.broken(stream, error.details || error.message));
    stream.on('end', () => this.broken(stream, 'the server ended the stream'));
    this.send({ version_info: this.acceptedVersion });
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.stream?.cancel();
    this.client.close();
  }

  private send(fields: Record<string, unknown>): void {
    // protobufjs's built-in google.protobuf.Value names its fields in camelCase, keepCase or not.
    const node = { id: this.settings.nodeId, metadata: { fields: Object.fromEntries(Object.entries(this.settings.nodeMetadata).map(([key, value]) => [key, { stringValue: value }])) } };
    this.stream?.write({ node, type_url: RATE_LIMIT_CONFIG_TYPE_URL, ...fields });
  }

  private received(response: DiscoveryResponse): void {
    this.backoffMs = this.settings.initialBackoffMs;
    const version = response.version_info ?? '';
    const resources = (response.resources ?? []).filter((resource) => resource.type_url === RATE_LIMIT_CONFIG_TYPE_URL);
    const decoded = decodeAll(resources);
    const problem = typeof decoded === 'string' ? decoded : this.apply(decoded, version);
    if (problem === undefined) {
      this.acceptedVersion = version;
      this.send({ version_info: version, response_nonce: response.nonce ?? '' });
    } else {
      this.send({ version_info: this.acceptedVersion, response_nonce: response.nonce ?? '', error_detail: { code: grpc.status.INVALID_ARGUMENT, message: problem } });
    }
  }

  private broken(stream: grpc.ClientDuplexStream<unknown, DiscoveryResponse>, why: string): void {
    if (this.closed || stream !== this.stream) return;
    this.stream = undefined;
    this.logger.warn({ server: this.settings.serverUrl, retryInMs: this.backoffMs }, `xDS stream lost, the last good config stays: ${why}`);
    this.timer = setTimeout(() => this.start(), this.backoffMs);
    this.backoffMs = Math.min(this.backoffMs * 2, this.settings.maxBackoffMs);
  }
}

/** Each resource's bytes as a RateLimitConfig, or why one is not (the NACK's message, naming the resource). */
function decodeAll(resources: readonly { value?: Uint8Array }[]): RateLimitConfigMessage[] | string {
  const configs: RateLimitConfigMessage[] = [];
  for (let i = 0; i < resources.length; i++) {
    try {
      configs.push(decodeRateLimitConfig(resources[i]!.value ?? new Uint8Array()));
    } catch (error) {
      return `resources[${i}]: not a RateLimitConfig: ${(error as Error).message}`;
    }
  }
  return configs;
}

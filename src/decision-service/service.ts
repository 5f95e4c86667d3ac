// Starts the decision service's listeners (each optional): the gRPC face and
// the HTTP face (/json, /decide, /healthcheck). What started is closed again
// when a later listener fails.
import type { Logger } from 'pino';
import type { ListenAddress, SluiceConfig } from '../config/types.js';
import type { DecisionDeps } from './engine-and-resolvers.js';
import { buildDeciders } from './deciders.js';
import { RlsGrpcServer } from './grpc-server.js';
import { DecisionHttpServer } from './http-server.js';

export interface DecisionService {
  /** `host:port` of the gRPC listener. */
  readonly grpcAddress: string | undefined;
  /** Base URL of the HTTP listener. */
  readonly httpUrl: string | undefined;
  /** Called when the drain starts: health turns NOT_SERVING. */
  drain(): void;
  /** Applies a reloaded config: Envoy domains, routes and their limits, header options (the listen addresses need a restart). */
  reconfigure(config: SluiceConfig, deps: DecisionDeps): void;
  close(graceMs: number): Promise<void>;
}

export type { DecisionDeps, DecisionObserver } from './engine-and-resolvers.js';

export const decisionServiceWanted = (config: SluiceConfig): boolean => config.decisionService.grpcListen !== undefined || config.decisionService.httpListen !== undefined;

export async function startDecisionService(config: SluiceConfig, deps: DecisionDeps): Promise<DecisionService> {
  const { grpcListen, httpListen } = config.decisionService;
  let deciders = buildDeciders(config, deps);
  const current = {
    get decider() {
      return deciders.decider;
    },
    get forwardAuth() {
      return deciders.forwardAuth;
    },
  };
  const grpc = grpcListen ? new RlsGrpcServer(current, deps.logger, {
        observer: deps.observer,
        tls: config.decisionService.grpcTls,
        connectionAge: config.decisionService.grpcConnectionAge,
        limits: config.decisionService.grpcLimits,
      }) : undefined;
  const http = httpListen ? new DecisionHttpServer(current, deps.logger) : undefined;
  if (grpc) grpc.tracing = deps.tracing;
  if (http) http.tracing = deps.tracing;
  let grpcAddress: string | undefined;
  let httpUrl: string | undefined;
  try {
    if (grpc && grpcListen) grpcAddress = await bindGrpc(grpc, grpcListen, config.decisionService.grpcUnixSocket);
    if (http && httpListen) httpUrl = `http://${hostText(httpListen.host)}:${(await http.listen(httpListen)).port}`;
  } catch (error) {
    await Promise.allSettled([grpc?.close(0), http?.close()]);
    throw error;
  }
  deps.logger.info({ grpc: grpcAddress, http: httpUrl, domains: config.decisionService.domains.size }, 'decision service listening');
  logConfigWarnings(config, deps.logger);
  return {
    grpcAddress,
    httpUrl,
    reconfigure(next, nextDeps) {
      deciders = buildDeciders(next, nextDeps);
      logConfigWarnings(next, nextDeps.logger);
    },
    drain() {
      grpc?.setServing(false);
      if (http) http.draining = true;
    },
    async close(graceMs) {
      await Promise.allSettled([grpc?.close(graceMs), http?.close()]);
    },
  };
}

/** The gRPC listener on its unix socket when one is given, else on its TCP address; its address as clients dial it. */
async function bindGrpc(grpc: RlsGrpcServer, listen: ListenAddress, socket: string | undefined): Promise<string> {
  if (socket) return grpc.listenUnix(socket).then(() => `unix:${socket}`);
  return `${hostText(listen.host)}:${await grpc.listen(listen)}`;
}

/** Reference keys out of place in the envoyConfig files, one warning per file and load. */
const logConfigWarnings = (config: SluiceConfig, logger: Logger): void => {
  for (const warning of config.decisionService.warnings) logger.warn(warning);
};

const hostText = (host: string): string => (host.includes(':') ? `[${host}]` : host);

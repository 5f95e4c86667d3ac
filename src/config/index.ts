// The config module's public face: errors, defaults and the SluiceConfig type.
// Loading is decision-service/load-config.ts's loadConfig and parseConfig (the loader
// with the decision service's parser), the one production uses.
export { ConfigError } from './config-error.js';
export type { Env } from './env.js';
export { DEFAULT_ADMIN_LISTEN, DEFAULT_LISTEN, DEFAULT_RULE, type DecisionServiceParser, listenAddress } from './load.js';
export type { ListenAddress, RouteConfig, SeedRule, SluiceConfig, StoreConfig, TenantKey } from './types.js';

// The config module's public face: errors, defaults and the SluiceConfig type.
// Loading is decision/load-config.ts's loadConfig and parseConfig (the loader
// with the decision service's parser), the one production uses.
export { ConfigError } from './config-error.js';
export type { Env } from './env.js';
export { DEFAULT_ADMIN_LISTEN, DEFAULT_LISTEN, DEFAULT_RULE, type DecisionServiceParser, listenAddress } from './load.js';
// Only for test/resilience/sentinel-failover.sys.test.ts, which another branch
// (wt-chain) is restructuring at the same time: drop this line once that file
// imports parseConfig from decision/load-config.js, the one loader.
export { parseConfigWith as parseConfig } from './load.js';
export type { ListenAddress, RouteConfig, SeedRule, SluiceConfig, StoreConfig, TenantKey } from './types.js';

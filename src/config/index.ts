// The config module's public face: load, parse, and the SluiceConfig type.
export { ConfigError } from './config-error.js';
export type { Env } from './env.js';
export { DEFAULT_ADMIN_LISTEN, DEFAULT_LISTEN, DEFAULT_RULE, type DecisionServiceParser, listenAddress, loadConfig, type ParseOptions, parseConfig } from './load.js';
export type { ListenAddress, RouteConfig, SeedRule, SluiceConfig, StoreConfig, TenantKey } from './types.js';

// The package root: the library API and the pieces a Node service needs to embed Sluice.
export type { Decision, DecisionSource } from './core/decision.js';
export { SluiceError, isSluiceError, type ErrorCode } from './core/errors.js';
export { GATEWAY_ERRORS, SLUICE_ERRORS, type GatewayErrorName } from './core/error-codes.js';
export { type Bucket, type BucketKey, bucketKey, hashedId, isValidId, keyId } from './core/ids.js';
export { checkRule, parseRule, POLICIES, type PolicyName, type Rule } from './policies/rule.js';
export {
  type HeaderOptions,
  type LimitView,
  limitViews,
  pushLimitHeaders,
  pushLimitsHeaders,
  type Rejection,
  rejection,
  rejectionOf,
  retryAfterSeconds,
} from './http/headers.js';
export { type CreateEngineOptions, createEngine, createResilientEngine } from './engine-factory/create-engine.js';
export { createLimiter, type LimiterOptions, type RateLimiter, type Reservation } from './limiter/engine/create-limiter.js';
export { StoreEngine, type Engine, type EngineHealth, type EngineCounters, type LimitCall, type LimitsDecision } from './limiter/engine/engine.js';
export type { ResilientEngine } from './limiter/engine/resilient-engine.js';
export { MemoryStore, type MemoryStoreOptions } from './stores/memory-store.js';
export { RedisStore } from './stores/redis-store.js';
export { connectRedis, type RedisTarget } from './stores/redis/connect.js';
export type { Store, BucketInfo, GroupReply, StoreCall } from './stores/store.js';

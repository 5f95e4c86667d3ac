// The config loader: config/load.ts with the decision service's parser plugged
// in. What `sluice start`, `sluice check`, reloads and `sluice ratelimit` load
// with, so `decisionService:` (and the envoyproxy/ratelimit files it names) is
// read like any other section; the tests load with it too, so they load what
// production loads.
import type { Env } from '../config/env.js';
import { loadConfigWith, type ParseOptions, parseConfigWith } from '../config/load.js';
import type { SluiceConfig } from '../config/types.js';
import { decisionServiceOf } from './decision-config.js';

/** Loads and validates a config file. Throws ConfigError naming file, line and field. */
export const loadConfig = (file: string, env: Env = process.env): SluiceConfig => loadConfigWith(file, env, decisionServiceOf);

export const parseConfig = (text: string, options: Omit<ParseOptions, 'decisionService'> = {}): SluiceConfig => parseConfigWith(text, { ...options, decisionService: decisionServiceOf });

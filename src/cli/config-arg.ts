// `--config FILE` for every subcommand that reads the config, and how a bad
// config is reported: one line naming file, line and field, exit code 2.
import { existsSync, readFileSync } from 'node:fs';
import { ConfigError, type SluiceConfig } from '../config/index.js';
import { loadConfig } from '../decision-service/load-config.js';
import type { Env } from '../config/env.js';
import { unknownVariableMessage, unknownVariables } from '../config/env-names.js';
import { SluiceError } from '../core/errors.js';
import { tracingSettings } from '../tracing/settings.js';

export const DEFAULT_CONFIG_FILE = 'sluice.yaml';

export function configFileFrom(explicit: string | undefined): string {
  return explicit ?? process.env.SLUICE_CONFIG ?? DEFAULT_CONFIG_FILE;
}

/** The loaded config, or undefined after printing why it cannot be used (a bad OTEL_* variable too); a misspelt SLUICE_* variable is warned of first. */
export function loadConfigOrReport(file: string, env: Env = process.env): SluiceConfig | undefined {
  const exists = existsSync(file);
  for (const unknown of unknownVariables(env, exists ? readFileSync(file, 'utf8') : '')) process.stderr.write(`sluice: warning: ${unknownVariableMessage(unknown)}\n`);
  if (!exists) {
    process.stderr.write(`sluice: config file ${file} not found (give --config FILE)\n`);
    return undefined;
  }
  let config: SluiceConfig;
  try {
    config = loadConfig(file, env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    return undefined;
  }
  try {
    tracingSettings(config.tracing, env); // a bad OTEL_* variable is refused here too, before anything starts
  } catch (error) {
    if (!(error instanceof SluiceError)) throw error;
    process.stderr.write(`sluice: ${error.message}\n`);
    return undefined;
  }
  return config;
}

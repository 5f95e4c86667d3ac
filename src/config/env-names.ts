// SLUICE_* variables nobody reads: a typo (SLUICE_REDIS_SENTINAL) would
// otherwise be ignored in silence and the deployment run without it.
import { type Env, envOverrides, referencedVariables } from './env.js';

/**
 * Read outside envOverrides: the file to load, the CLI's admin API, the audit
 * log's retention (rules/admin/tokens-and-audit.ts), and `sluice ratelimit`'s own options
 * (decision-service/reference/sluice-config.ts). test/config/connections.int.test.ts finds
 * every SLUICE_* name src/ reads and fails when one is missing here; the
 * descriptions go to docs/environment-variables.md.
 */
export const OTHER_VARIABLES: readonly { name: string; default?: string; description: string }[] = [
  { name: 'SLUICE_CONFIG', default: '`sluice.yaml`', description: 'the config file, when `--config` is not given' },
  { name: 'SLUICE_ADMIN_URL', default: '`http://127.0.0.1:8081`', description: 'the admin API the CLI talks to ([admin-api.md](admin-api.md#cli-for-operators))' },
  { name: 'SLUICE_AUDIT_KEEP_DAYS', default: '`90`', description: 'days of audit log the rule store keeps ([admin-api.md](admin-api.md#audit-log))' },
  { name: 'SLUICE_AUDIT_KEEP_ENTRIES', default: '`100000`', description: 'changes of audit log the rule store keeps' },
  { name: 'SLUICE_AUDIT_KEEP_FAILED', default: '`10000`', description: 'failed attempts the audit log keeps, counted apart' },
  { name: 'SLUICE_RESILIENCE', description: "`sluice ratelimit`'s resilience options ([decision-service.md](decision-service.md))" },
  { name: 'SLUICE_STORE_DEADLINE_MS', description: "`sluice ratelimit`'s Redis deadline" },
  { name: 'SLUICE_HEADERS_IETF', description: "`sluice ratelimit`'s IETF headers" },
];

/** Every SLUICE_* variable Sluice reads: the overrides (asked of envOverrides itself, so the list cannot drift) and the others. */
export function knownVariables(): string[] {
  const asked = new Set<string>(OTHER_VARIABLES.map((variable) => variable.name));
  const recording = new Proxy({} as Env, {
    get(_target, name) {
      if (typeof name === 'string') asked.add(name);
      return undefined;
    },
  });
  envOverrides(recording);
  return [...asked];
}

export interface UnknownVariable {
  variable: string;
  /** The known variable closest in spelling. */
  nearest: string;
}

/**
 * The SLUICE_* variables of `env` that Sluice does not read, each with the
 * nearest known name; `configText` is the config file, whose `${VAR}`
 * references (SLUICE_REFUSED_STATUS in the nginx recipe) it reads too.
 */
export function unknownVariables(env: Env, configText = ''): UnknownVariable[] {
  const known = [...knownVariables(), ...referencedVariables(configText)];
  return Object.keys(env)
    .filter((name) => name.startsWith('SLUICE_') && !known.includes(name))
    .sort()
    .map((variable) => ({ variable, nearest: nearest(variable, known) }));
}

/** The warning for one unknown variable. */
export function unknownVariableMessage({ variable, nearest }: UnknownVariable): string {
  return `${variable} is not a Sluice variable and is ignored; did you mean ${nearest}? (see docs/environment-variables.md)`;
}

function nearest(name: string, candidates: readonly string[]): string {
  let best = candidates[0] ?? '';
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const distance = editDistance(name, candidate);
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

/** Levenshtein distance, one row at a time. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

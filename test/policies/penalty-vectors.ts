// The penalty box's shared vectors (src/policies/penalty/vectors.json, and
// penalized-vectors.json for a limit with its box), read
// once for the model's unit test and the Lua twin's int test.
import { readFileSync } from 'node:fs';

export interface PenaltyVector {
  name: string;
  penalty: unknown;
  steps: { at: number; refused: boolean; expect: { blocked: boolean; retryAfterMs: number } }[];
}

export const PENALTY_VECTORS = JSON.parse(readFileSync(new URL('../../src/policies/penalty/vectors.json', import.meta.url), 'utf8')) as PenaltyVector[];

export interface PenalizedVector {
  name: string;
  rule: unknown;
  penalty: unknown;
  steps: { at: number; cost: number; expect: { allowed: boolean; blocked: boolean; retryAfterMs?: number } }[];
}

export const PENALIZED_VECTORS = JSON.parse(readFileSync(new URL('../../src/policies/penalty/penalized-vectors.json', import.meta.url), 'utf8')) as PenalizedVector[];

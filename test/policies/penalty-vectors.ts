// The penalty box's shared vectors (src/policies/penalty/vectors.json), read
// once for the model's unit test and the Lua twin's int test.
import { readFileSync } from 'node:fs';

export interface PenaltyVector {
  name: string;
  penalty: unknown;
  steps: { at: number; refused: boolean; expect: { blocked: boolean; retryAfterMs: number } }[];
}

export const PENALTY_VECTORS = JSON.parse(readFileSync(new URL('../../src/policies/penalty/vectors.json', import.meta.url), 'utf8')) as PenaltyVector[];

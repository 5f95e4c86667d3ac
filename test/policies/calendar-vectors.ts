// The calendar vectors (src/policies/fixed-window/calendar-vectors.json), read
// and resolved the same way for the model's unit test and the Lua twin's
// integration test: each step's boundaries come from the time-zone rules at
// the instance's clock (`instanceAt`, else `at`), and the decision is taken at `at`.
import { readFileSync } from 'node:fs';
import { calendarBoundaries } from '../../src/core/calendar.js';
import { type FixedWindowRule, parseRule } from '../../src/policies/rule.js';
import type { CalendarBounded } from '../../src/policies/calendar-rule.js';

export interface CalendarStep {
  at: string;
  instanceAt?: string;
  /** The rule from this step on (a tenant's zone, anchor or unit changed); else the vector's. */
  rule?: FixedWindowRule;
  cost: number;
  expect: { allowed: boolean; remaining: number; window: [string, string] };
}

export interface CalendarVector {
  name: string;
  rule: FixedWindowRule;
  steps: CalendarStep[];
}

export function calendarVectors(): CalendarVector[] {
  const file = new URL('../../src/policies/fixed-window/calendar-vectors.json', import.meta.url);
  const raw = JSON.parse(readFileSync(file, 'utf8')) as { name: string; rule: unknown; steps: CalendarStep[] }[];
  return raw.map((vector) => ({
    ...vector,
    rule: parseRule(vector.rule) as FixedWindowRule,
    steps: vector.steps.map((step) => (step.rule === undefined ? step : { ...step, rule: parseRule(step.rule) as FixedWindowRule })),
  }));
}

/** The rule step `index` is decided by: the last one a step set at or before it, else the vector's. */
export function ruleOfStep(vector: CalendarVector, index: number): FixedWindowRule {
  for (let i = index; i >= 0; i--) if (vector.steps[i]!.rule !== undefined) return vector.steps[i]!.rule!;
  return vector.rule;
}

/** The rule as a store hands it to the model or the twin for this step: boundaries from the instance's clock. */
export function ruleForStep(rule: FixedWindowRule, step: CalendarStep): FixedWindowRule & CalendarBounded {
  const instance = Date.parse(step.instanceAt ?? step.at);
  return { ...rule, boundaries: calendarBoundaries(instance, rule.calendar!).boundaries };
}

// The tests' one polling loop: wait for something that happens on its own time
// (a listener up, a reload applied, a page redrawn) by asking again and again
// until it holds, never by sleeping a guessed while. test/helpers/resilient-engine.ts
// keeps its own for now (another branch restructures it).
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Resolves once `condition` holds, asking every `everyMs`; fails the test
 * naming `what` after `limitMs`. A condition that throws fails at once (wrap it
 * in `.catch(() => false)` to ask again instead).
 */
export async function until(condition: () => boolean | Promise<boolean>, what: string, limitMs = 10_000, everyMs = 10): Promise<void> {
  const deadline = performance.now() + limitMs;
  while (!(await condition())) {
    if (performance.now() > deadline) assert.fail(`${what}: not within ${limitMs} ms`);
    await sleep(everyMs);
  }
}

/** `until` for a check written as assertions: passes once `check` stops throwing; at the deadline, fails with its last failure. */
export async function eventually(check: () => void | Promise<void>, limitMs = 2000): Promise<void> {
  let failure: unknown;
  const passes = async () => {
    try {
      await check();
      return true;
    } catch (error) {
      failure = error;
      return false;
    }
  };
  try {
    await until(passes, 'the check passing', limitMs);
  } catch {
    throw failure;
  }
}

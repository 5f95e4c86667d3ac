// What each policy's script sends to Redis: only the prelude helpers its code
// calls. Redis builds every local function of a script anew on each call, and
// the token bucket's (the default, hottest script) once carried sluice_save
// because its comment "sluice_save, inlined" named it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { POLICIES } from '../../../src/policies/rule.js';
import { scriptSource } from '../../../src/stores/redis/scripts.js';

test('every prelude helper a script defines is used by that script', () => {
  for (const policy of POLICIES) {
    const source = scriptSource(policy);
    assert.ok(!/^--/m.test(source), `${policy}: no comment lines are sent`);
    for (const [, name] of source.matchAll(/^local (?:function )?(\w+)/gm)) {
      if (!name!.startsWith('sluice_')) continue;
      const uses = source.match(new RegExp(`\\b${name}\\b`, 'g'))!.length;
      assert.ok(uses >= 2, `${policy}: ${name} is defined and never used`);
    }
  }
});

// The dashboard's rule form takes its policies from the registry: the
// <select> lists every registered policy, and each parameter field shows for
// exactly the policies whose entry lists it, each field a parameter its
// policy's rule accepts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { policyFormFields, renderPolicyForm } from '../../src/dashboard/policy-form.js';
import { POLICIES, POLICY_REGISTRY } from '../../src/policies/index.js';
import { parseRule } from '../../src/policies/rule.js';

const PAGE = readFileSync(new URL('../../src/dashboard/ui/index.html', import.meta.url), 'utf8');

describe('the rule form from the policy registry', () => {
  it('lists every registered policy in the <select>, in the registry order', () => {
    const html = renderPolicyForm(PAGE);
    const select = html.slice(html.indexOf('<select id="rule-policy"'), html.indexOf('</select>', html.indexOf('<select id="rule-policy"')));
    assert.deepEqual(
      [...select.matchAll(/<option value="([^"]+)">\1<\/option>/g)].map((match) => match[1]),
      [...POLICIES],
    );
  });

  it('shows each field for the policies whose entry lists it, one input per field name', () => {
    const html = renderPolicyForm(PAGE);
    const shown = new Map([...html.matchAll(/data-field="([^"]+)" data-policies="([^"]+)"/g)].map((match) => [match[1]!, match[2]!.split(' ')]));
    for (const policy of POLICIES) {
      const own = POLICY_REGISTRY[policy].formFields.map((field) => field.name);
      assert.deepEqual([...shown].filter(([, policies]) => policies.includes(policy)).map(([name]) => name).sort(), [...own].sort(), policy);
    }
    assert.deepEqual(policyFormFields().map((field) => field.name), [...shown.keys()]);
    // The markup ui/rules.js and the page's tests read: a label, an input named by the field and its error line.
    assert.match(
      html,
      /<div class="field" data-field="capacity" data-policies="token_bucket gcra"><label for="rule-capacity">Capacity<\/label><input id="rule-capacity" name="capacity" inputmode="decimal"><p class="field-error" id="rule-capacity-error"><\/p><\/div>/,
    );
    assert.ok(!html.includes('<!-- policy'), 'both marks replaced');
  });

  it("asks only for parameters each policy's rule accepts", () => {
    for (const policy of POLICIES) {
      const rule: Record<string, unknown> = { policy };
      for (const { name } of POLICY_REGISTRY[policy].formFields) rule[name] = 1000;
      assert.doesNotThrow(() => parseRule(rule), policy);
    }
  });

  it('refuses a page without the marks rather than serve a form with no policies', () => {
    assert.throws(() => renderPolicyForm('<form></form>'), /lacks the policy form marks/);
  });
});

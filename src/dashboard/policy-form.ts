// The policy part of the dashboard's rule form, rendered from the policy
// registry into the page as it is served: the policy <select> lists every
// registered policy, and each parameter field names the policies that show it
// (data-policies, read by ui/rules.js), so a new policy appears in the form
// without a line of the page changing. A field several policies share (limit,
// windowMs) is one input, labelled as the first policy to list it labels it.
import { POLICIES, POLICY_REGISTRY } from '../policies/index.js';

/** Where index.html takes the policy options and the parameter fields. */
const OPTIONS_MARK = '<!-- policy options -->';
const FIELDS_MARK = '<!-- policy fields -->';

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

interface FormFieldOfPolicies {
  readonly name: string;
  readonly label: string;
  readonly policies: string[];
}

/** Each parameter field of the form, in the registry's order, with the policies that show it. */
export function policyFormFields(): FormFieldOfPolicies[] {
  const fields = new Map<string, FormFieldOfPolicies>();
  for (const policy of POLICIES) {
    for (const { name, label } of POLICY_REGISTRY[policy].formFields) {
      const field = fields.get(name) ?? { name, label, policies: [] };
      field.policies.push(policy);
      fields.set(name, field);
    }
  }
  return [...fields.values()];
}

/** `html` (the page) with the policy options and parameter fields in place of their marks. */
export function renderPolicyForm(html: string): string {
  const options = POLICIES.map((policy) => `<option value="${escapeHtml(policy)}">${escapeHtml(policy)}</option>`).join('');
  const fields = policyFormFields()
    .map(({ name, label, policies }) => {
      const id = `rule-${escapeHtml(name)}`;
      return (
        `<div class="field" data-field="${escapeHtml(name)}" data-policies="${escapeHtml(policies.join(' '))}">` +
        `<label for="${id}">${escapeHtml(label)}</label><input id="${id}" name="${escapeHtml(name)}" inputmode="decimal">` +
        `<p class="field-error" id="${id}-error"></p></div>`
      );
    })
    .join('\n            ');
  if (!html.includes(OPTIONS_MARK) || !html.includes(FIELDS_MARK)) throw new Error('the dashboard page lacks the policy form marks');
  return html.replace(OPTIONS_MARK, options).replace(FIELDS_MARK, fields);
}

// The page's sections for a team: who is signed in (and so which edit actions
// show), per-key overrides, tenant lookup, explain a request, admin tokens and the audit log. One entry point
// for app.js, which loads each when its view shows and clears them all at sign-out.
import { setupAudit } from './audit.js';
import { setupExplain } from './explain.js';
import { setupOverrides } from './overrides.js';
import { clearRole, loadRole } from './role.js';
import { setupTenants } from './tenants.js';
import { setupTokens } from './tokens.js';

export function setupTeam(api, report) {
  const overrides = setupOverrides(api, report);
  const tokens = setupTokens(api, report);
  const audit = setupAudit(api, report);
  const sections = [overrides, setupTenants(api, report), setupExplain(api, report), tokens, audit];
  return {
    loadRole: () => loadRole(api),
    overrides,
    tokens,
    audit,
    clear() {
      clearRole();
      for (const section of sections) section.clear();
    },
  };
}

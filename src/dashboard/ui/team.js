// The page's sections for a team: who is signed in (and so which edit actions
// show), per-key overrides, tenant lookup and the audit log. One entry point
// for app.js: load after sign-in, clear at sign-out.
import { setupAudit } from './audit.js';
import { setupOverrides } from './overrides.js';
import { clearRole, loadRole } from './role.js';
import { setupTenants } from './tenants.js';

export function setupTeam(api, report) {
  const sections = [setupOverrides(api, report), setupTenants(api, report), setupAudit(api, report)];
  return {
    async load() {
      await loadRole(api);
      await Promise.all(sections.map((section) => section.load?.()));
    },
    clear() {
      clearRole();
      for (const section of sections) section.clear();
    },
  };
}

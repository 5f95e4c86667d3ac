// The page's sections for a team: who is signed in (and so which edit actions
// show), per-key overrides, tenant lookup, explain a request, admin tokens and the audit log. One entry point
// for app.js: load after sign-in, clear at sign-out.
import { setupAudit } from './audit.js';
import { setupExplain } from './explain.js';
import { setupOverrides } from './overrides.js';
import { clearRole, loadRole } from './role.js';
import { setupTenants } from './tenants.js';
import { setupTokens } from './tokens.js';

export function setupTeam(api, report) {
  const audit = setupAudit(api, report);
  const sections = [setupOverrides(api, report), setupTenants(api, report), setupExplain(api, report), setupTokens(api, report), audit];
  // Every write from any section of the page, done or refused, shows in the log at once.
  const call = api.call;
  api.call = async (method, ...rest) => {
    try {
      return await call(method, ...rest);
    } finally {
      if (method !== 'GET' && api.hasToken()) void audit.load();
    }
  };
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

// Which JWT each route requires: its own `auth:`, else the top-level one;
// `auth: none` opts a route out. The top-level section is loaded once and
// shared by the routes that inherit it (the gateway then shares one verifier,
// and one cached key set, between them).
import { type JwtAuthConfig, type JwtConfigContext, jwtAuthOf } from '../auth/jwt-config.js';
import type { ConfigFile } from './schema.js';

export function routeAuths(file: ConfigFile, ctx: JwtConfigContext): (JwtAuthConfig | undefined)[] {
  const top = file.auth === undefined ? undefined : jwtAuthOf(file.auth, ['auth'], ctx);
  return file.routes.map((route, index) => {
    const own = route.auth;
    const auth = own === undefined ? top : own.kind === 'none' ? undefined : jwtAuthOf(own, ['routes', index, 'auth'], ctx);
    if (auth?.tenantClaim !== undefined && route.anonymous) {
      ctx.fail(['routes', index, 'anonymous'], `cannot be true with auth.tenantClaim: the tenant comes from the ${auth.tenantClaim} claim (drop anonymous)`);
    }
    return auth;
  });
}

// Parts of the loaded config built from the file's listener and route
// sections: the gateway's and the admin API's addresses and TLS (certificate
// files read and checked now, a problem reported at the field naming the file),
// and each route with its upstream instances.
import { type ConfigPath, parsePath } from './config-error.js';
import { checkRouteForwarding, upstreamInstances } from './route-forwarding.js';
import type { ConfigFile } from './schema.js';
import { type TlsConfig, TlsFileError, tlsOf } from './tls.js';
import type { ListenAddress, RouteConfig, SluiceConfig } from './types.js';

type Fail = (path: ConfigPath, message: string) => never;

export const DEFAULT_LISTEN = '127.0.0.1:8080';
export const DEFAULT_ADMIN_LISTEN = '127.0.0.1:8081';

export function listenAddress(text: string): ListenAddress {
  const colon = text.lastIndexOf(':');
  const host = colon <= 0 ? '127.0.0.1' : text.slice(0, colon).replace(/^\[|\]$/g, '');
  return { host, port: Number(text.slice(colon + 1)) };
}

export function listenersOf(file: ConfigFile, baseDir: string, fail: Fail): Pick<SluiceConfig, 'listen' | 'tls' | 'admin'> {
  return {
    listen: listenAddress(file.listen ?? DEFAULT_LISTEN),
    tls: file.tls === undefined ? undefined : { ...checkedTls(file.tls, baseDir, 'tls', fail), redirectHttp: file.tls.redirectHttp === undefined ? undefined : listenAddress(file.tls.redirectHttp) },
    admin: {
      listen: listenAddress(file.admin?.listen ?? DEFAULT_ADMIN_LISTEN),
      token: file.admin?.token,
      tls: file.admin?.tls === undefined ? undefined : checkedTls(file.admin.tls, baseDir, 'admin.tls', fail),
    },
  };
}

function checkedTls(file: Parameters<typeof tlsOf>[0], baseDir: string, field: string, fail: Fail): TlsConfig {
  try {
    return tlsOf(file, baseDir, field);
  } catch (error) {
    if (!(error instanceof TlsFileError)) throw error;
    return fail(parsePath(error.field), error.message);
  }
}

export function routeOf(route: ConfigFile['routes'][number], index: number, limits: RouteConfig['limits'], fail: Fail): RouteConfig {
  checkRouteForwarding(route, (field, message) => fail(['routes', index, field], message));
  const { upstream, auth: _auth, ...rest } = route; // auth: loaded apart (route-auth.ts)
  return { ...rest, auth: undefined, host: route.host, healthCheck: route.healthCheck, rewrite: route.rewrite, requestHeaders: route.requestHeaders, responseHeaders: route.responseHeaders, methods: route.methods, upstreams: upstreamInstances(upstream), limits };
}

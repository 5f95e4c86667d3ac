// The path a route is matched on and the upstream is sent: the request's path
// normalized as RFC 3986 §6.2.2 says (percent-encoded unreserved characters
// decoded, the other escapes' hex upper-cased, `.` and `..` segments
// resolved), with empty segments collapsed as nginx's merge_slashes does. An
// upstream that decodes `%2e` or merges `//` itself would otherwise serve a
// path no route was matched on (and no limit applied to).

/** Characters RFC 3986 §2.3 calls unreserved: decoding them never changes what a path means. */
const UNRESERVED = /[A-Za-z0-9\-._~]/;

/**
 * The normalized path, or undefined when it cannot be served: a fragment
 * (`#` never belongs in a request target; refused as Envoy does), a malformed
 * escape (`%zz`), a `..` that climbs above the root, or no leading `/`.
 */
export function normalizePath(path: string): string | undefined {
  if (path.charCodeAt(0) !== 47) return undefined;
  // Nearly every request: nothing to decode, resolve or merge.
  if (!path.includes('%') && !path.includes('/.') && !path.includes('//') && !path.includes('#')) return path;
  if (path.includes('#')) return undefined;
  const decoded = decodeUnreserved(path);
  if (decoded === undefined) return undefined;
  return resolveSegments(decoded);
}

function decodeUnreserved(path: string): string | undefined {
  if (!path.includes('%')) return path;
  let out = '';
  for (let i = 0; i < path.length; i++) {
    const char = path[i]!;
    if (char !== '%') {
      out += char;
      continue;
    }
    const hex = path.slice(i + 1, i + 3);
    if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return undefined;
    const decoded = String.fromCharCode(Number.parseInt(hex, 16));
    out += UNRESERVED.test(decoded) ? decoded : `%${hex.toUpperCase()}`;
    i += 2;
  }
  return out;
}

/** `.` dropped, `..` takes the segment before it, empty segments merged; a trailing slash is kept. */
function resolveSegments(path: string): string | undefined {
  const segments = path.split('/');
  const out: string[] = [];
  let trailingSlash = false;
  for (let i = 1; i < segments.length; i++) {
    const segment = segments[i]!;
    const last = i === segments.length - 1;
    if (segment === '..') {
      if (out.length === 0) return undefined; // above the root: nginx answers 400 too
      out.pop();
      trailingSlash = last;
    } else if (segment === '.' || segment === '') {
      trailingSlash = last;
    } else {
      out.push(segment);
      trailingSlash = false;
    }
  }
  return `/${out.join('/')}${trailingSlash && out.length > 0 ? '/' : ''}`;
}

/** Splits a request target into its path and the rest (`?query`, kept as sent). */
export function splitTarget(url: string): [path: string, rest: string] {
  const query = url.indexOf('?');
  return query === -1 ? [url, ''] : [url.slice(0, query), url.slice(query)];
}

/** The request target with its path normalized and its query as sent; undefined as for normalizePath (a `#` in the query too). */
export function normalizeTarget(url: string): string | undefined {
  if (url.includes('#')) return undefined;
  const [path, rest] = splitTarget(url);
  const normal = normalizePath(path);
  return normal === undefined ? undefined : normal === path ? url : `${normal}${rest}`;
}

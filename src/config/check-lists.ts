// The config file's `lists:` checked against the rest of the file: the routes
// an entry names exist, a limit it lifts is a rate limit of a route it applies
// to, a claim entry applies to a route that verifies tokens. Each refusal names
// the entry's field (and so its line).
import { entryOfInput, type ListEntryInput } from '../lists/config-schema.js';
import type { ListEntry } from '../lists/types.js';
import type { ConfigPath } from './config-error.js';

type Fail = (path: ConfigPath, message: string) => never;

interface ListRoute {
  id: string;
  limits: readonly { id: string }[];
  concurrency: readonly { id: string }[];
  authed: boolean;
}

export function checkLists(inputs: readonly ListEntryInput[], routes: readonly ListRoute[], fail: Fail): ListEntry[] {
  const byId = new Map(routes.map((route) => [route.id, route]));
  return inputs.map((input, index) => {
    const scope = (input.routes ?? routes.map((route) => route.id)).map((id, at) => byId.get(id) ?? fail(['lists', index, 'routes', at], `unknown route ${id}`));
    if (input.limit !== undefined) checkLimit(input.limit, scope, ['lists', index, 'limit'], fail);
    if (input.claim !== undefined && !scope.some((route) => route.authed)) {
      fail(['lists', index, 'claim'], 'no route it applies to verifies a JWT (auth: jwt), so no request carries claims');
    }
    return entryOfInput(input, `config-${index}`);
  });
}

function checkLimit(limit: string, scope: readonly ListRoute[], path: ConfigPath, fail: Fail): void {
  if (scope.some((route) => route.limits.some((own) => own.id === limit))) return;
  if (scope.some((route) => route.concurrency.some((own) => own.id === limit))) {
    fail(path, `${limit} is a concurrency limit: lists lift rate limits only (an allow entry without limit skips every limit)`);
  }
  fail(path, `unknown limit ${limit} on the routes this entry applies to`);
}

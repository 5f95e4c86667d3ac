// The adapters' `lists` option: the config file's `lists:` entries, checked by
// the same schema (a refused entry names `lists.N.field`), applied before the
// limits as the gateway applies them: deny → 403 {"error":"denied"} with no
// bucket charged; allow → no limit; an allow with `limit` lifts that limit.
// An adapter has no routes of its own, so an entry may not scope itself to
// routes; a tenant entry matches the tenant `resolve` names (there is none
// without it); a claim entry the payload `claims` reads.
import { SluiceError } from '../core/errors.js';
import { zodToSluiceError } from '../policies/rule.js';
import { entryOfInput, type ListEntryInput, listEntrySchema } from '../lists/config-schema.js';
import { ListSet } from '../lists/list-set.js';

/** One entry of the `lists` option: the shape of the config file's `lists:` (docs/lists.md), without `routes`. */
export type AdapterListEntry = Omit<ListEntryInput, 'routes'>;

const fail = (message: string, field: string) => new SluiceError('ERR_CONFIG_INVALID', message, field);

/** The set to apply, or undefined without entries. `limitIds`: the adapter's limits (undefined with `resolve`: a target's route is its limit's id). */
export function checkListsOption(inputs: unknown, limitIds: readonly string[] | undefined): ListSet | undefined {
  if (inputs === undefined) return undefined;
  if (!Array.isArray(inputs)) throw fail('must be a list of entries', 'lists');
  if (inputs.length === 0) return undefined;
  const entries = inputs.map((input: unknown, index) => {
    const parsed = listEntrySchema.safeParse(input);
    if (!parsed.success) throw zodToSluiceError(parsed.error, `lists.${index}`, 'ERR_CONFIG_INVALID');
    const entry = parsed.data;
    if (entry.routes !== undefined) throw fail('an adapter has no routes: register it on the routes the entry is for', `lists.${index}.routes`);
    if (entry.tenant !== undefined && limitIds !== undefined) throw fail('a tenant entry needs resolve (the tenant it names)', `lists.${index}.tenant`);
    if (entry.limit !== undefined && limitIds !== undefined && !limitIds.includes(entry.limit)) throw fail(`unknown limit ${entry.limit}; the limits are ${limitIds.join(', ')}`, `lists.${index}.limit`);
    return entryOfInput(entry, `option-${index}`);
  });
  return new ListSet(entries);
}

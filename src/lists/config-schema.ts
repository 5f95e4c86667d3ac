// One allow or deny list entry as a user writes it (the config file's
// `lists:`, and the admin API's body): exactly one of cidr, tenant, header or
// claim; an action; optional routes, limit, expiry and note. Header and claim
// values arrive in the clear and are hashed before they are kept
// (entryOfInput). Built, with zod, when first read (not by `import 'sluice'`).
import type { z as Zod } from 'zod';
import { isValidId } from '../core/ids.js';
import { lazily } from '../core/lazy.js';
import { loadPackage } from '../core/load-package.js';
import { listValueHash } from './list-set.js';
import { parseNetwork } from './prefix-table.js';
import type { ListEntry, ListMatch } from './types.js';

export const MATCH_FIELDS = ['cidr', 'tenant', 'header', 'claim'] as const;
const ID_MESSAGE = 'must be an id: 1-64 letters, digits or . _ ~ @ + -';

function listEntrySchemaOf(z: typeof Zod) {
  const id = z.string().refine(isValidId, ID_MESSAGE);
  const named = (what: string) =>
    z
      .object({
        name: z.string().min(1, 'must not be empty').max(256, 'must be at most 256 characters').describe(`The ${what}'s name.`),
        value: z.string().min(1, 'must not be empty').max(4096, 'must be at most 4096 characters').describe(`The ${what}'s exact value; kept only as its SHA-256.`),
      })
      .strict();
  return z
    .object({
      action: z.enum(['allow', 'deny'], 'must be allow or deny').describe('allow: no limit applies (or only `limit` is lifted); deny: the request is answered 403 denied before any limit is charged.'),
      cidr: z
        .string()
        .refine((text) => parseNetwork(text) !== undefined, 'must be an IPv4 or IPv6 address or CIDR such as 203.0.113.0/24 or 2001:db8::/32')
        .optional()
        .describe("The client's address or network, as the trusted-proxy rules resolve it (clientIp:)."),
      tenant: id.optional().describe("The API key's tenant."),
      header: named('header').optional().describe('A request header and the value it must hold.'),
      claim: named('claim').optional().describe("A verified JWT's claim and its value (routes with auth: jwt)."),
      routes: z.array(id).min(1, 'must list at least one route (leave it out for every route)').optional().describe('The routes the entry applies to; absent: every route.'),
      limit: id.optional().describe("Allow only: lift this limit (a rate limit's id) and apply the route's others."),
      expiresAt: z
        .string()
        .refine((text) => /^\d{4}-\d\d-\d\dT/.test(text) && Number.isFinite(Date.parse(text)), 'must be an ISO 8601 time such as 2027-01-31T00:00:00Z')
        .optional()
        .describe('When the entry stops applying (ISO 8601); absent: never.'),
      note: z.string().max(500, 'must be at most 500 characters').optional().describe('Why the entry exists; shown to operators, never to clients.'),
    })
    .strict()
    .superRefine((entry, ctx) => {
      const given = MATCH_FIELDS.filter((field) => entry[field] !== undefined);
      if (given.length !== 1) ctx.addIssue({ code: 'custom', path: given.length > 1 ? [given[1]!] : ['cidr'], message: `must give exactly one of ${MATCH_FIELDS.join(', ')}` });
      if (entry.limit !== undefined && entry.action !== 'allow') ctx.addIssue({ code: 'custom', path: ['limit'], message: 'only an allow entry can name a limit (a deny refuses the whole request)' });
    });
}

export const listEntrySchema = lazily(() => listEntrySchemaOf(loadPackage<{ z: typeof Zod }>('zod').z));
export type ListEntryInput = Zod.infer<ReturnType<typeof listEntrySchemaOf>>;

/** The entry to keep: header and claim values hashed, the expiry as epoch ms. */
export function entryOfInput(input: ListEntryInput, id: string): ListEntry {
  return {
    id,
    action: input.action,
    match: matchOf(input),
    ...(input.routes !== undefined ? { routes: input.routes } : {}),
    ...(input.limit !== undefined ? { limit: input.limit } : {}),
    ...(input.expiresAt !== undefined ? { expiresAt: Date.parse(input.expiresAt) } : {}),
    ...(input.note !== undefined ? { note: input.note } : {}),
  };
}

function matchOf(input: ListEntryInput): ListMatch {
  if (input.cidr !== undefined) return { kind: 'cidr', cidr: input.cidr };
  if (input.tenant !== undefined) return { kind: 'tenant', tenant: input.tenant };
  if (input.header !== undefined) return { kind: 'header', header: input.header.name.toLowerCase(), valueHash: listValueHash(input.header.value) };
  const claim = input.claim!;
  return { kind: 'claim', claim: claim.name, valueHash: listValueHash(claim.value) };
}

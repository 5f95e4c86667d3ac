// Allow and deny lists: what one entry says (who it matches, allow or deny,
// where it applies, until when) and what a lookup answers. Header and claim
// values are kept as their hash only, as API keys are: a list never holds a
// caller's secret in the clear, in memory, in the store or in a log.

export type ListAction = 'allow' | 'deny';

/** Who an entry matches: a client address or network, an API key's tenant, a header's value or a verified JWT claim's value. */
export type ListMatch =
  | { kind: 'cidr'; cidr: string }
  | { kind: 'tenant'; tenant: string }
  | { kind: 'header'; header: string; valueHash: string }
  | { kind: 'claim'; claim: string; valueHash: string };

export interface ListEntry {
  /** Stable id: `config-<n>` for the config file's entries, the store's id for the others. */
  id: string;
  action: ListAction;
  match: ListMatch;
  /** The routes it applies to; absent: every route (global). */
  routes?: readonly string[] | undefined;
  /** Allow only: this limit is not applied to the matching requests; the others are. */
  limit?: string | undefined;
  /** Epoch ms after which the entry no longer applies; absent: never expires. */
  expiresAt?: number | undefined;
  note?: string | undefined;
}

/** One request as the lists see it. */
export interface ListQuery {
  route: string;
  tenant?: string | undefined;
  /** The client address the trusted-proxy rules resolved (request-limits/client-ip.ts); asked only when a network entry exists. */
  ip?: () => { address: string; family: 'ipv4' | 'ipv6' } | undefined;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  claims?: Readonly<Record<string, unknown>> | undefined;
  now: number;
}

export interface ListVerdict {
  /** deny: refuse (403); allow: no limit applies; undefined: the limits decide. */
  action: ListAction | undefined;
  /** The limit-scoped allow entries that matched: these limits are not applied. */
  exemptLimits: ReadonlySet<string>;
}

// A threshold event: its JSON body (what the receiver gets) and its id. The id
// is a hash of the bucket, window and threshold, the same on every instance,
// so a receiver can deduplicate too (an event may come twice if Redis was
// unreachable when it was claimed: delivery is at least once).
import { createHash } from 'node:crypto';
import { hashedId, isValidId } from '../core/ids.js';

export interface ThresholdEvent {
  readonly id: string;
  readonly type: 'limit.threshold';
  /** The request's tenant; null on an anonymous route. */
  readonly tenant: string | null;
  readonly limit: string;
  readonly route?: string;
  readonly threshold: number;
  /** The limit's capacity (or window limit) when the event fired. */
  readonly limitValue: number;
  readonly remaining: number;
  /** ISO 8601: when the window ends (rolling policies: when the bucket would be full again). */
  readonly windowResetAt: string;
  /** ISO 8601: when the threshold was reached. */
  readonly at: string;
}

/** Identifies one event cluster-wide: the bucket (its tag and name), the window's start and the threshold. */
export interface EventIdentity {
  readonly tag: string;
  readonly name: string;
  readonly windowStart: number;
  readonly threshold: number;
}

export function eventId({ tag, name, windowStart, threshold }: EventIdentity): string {
  return `evt_${createHash('sha256').update(`${tag}\u0000${name}\u0000${windowStart}\u0000${threshold}`).digest('hex').slice(0, 32)}`;
}

const safe = (id: string) => (isValidId(id) ? id : hashedId(id));

/**
 * The Redis key that claims the event: `sluice:notify:{tag}:name:start:threshold`.
 * The bucket's tag is the hash tag (the bucket's own slot); an id that is not a
 * valid id (one holding `{`, `}` or `:`) is hashed first, so it cannot move the
 * key into another slot or another key's layout.
 */
export function claimKey(identity: EventIdentity): string {
  return `sluice:notify:{${safe(identity.tag)}}:${safe(identity.name)}:${identity.windowStart}:${identity.threshold}`;
}

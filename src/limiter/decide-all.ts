// Deciding a request's limits together: the parts every engine shares.
//
// Within one of the store's groups (one hash slot on Redis, everything on the
// memory store: Store.groups) the store decides the limits in one atomic call:
// every bucket charged, or none (src/policies/compose.ts and its Lua twin).
// Limits of different groups cannot share a script, so each group is decided
// on its own, in parallel:
// reserve-and-refund. If any group refuses, what the admitting groups took is
// given back (the store's adjust, a negative delta). Never over-admits; a
// concurrent request may be refused while units are reserved and not yet
// refunded (docs/limits.md measures how often).
import type { Decision } from '../core/decision.js';
import { bucketKey } from '../core/ids.js';
import { assertValidCost, checkRule } from '../core/rule.js';
import type { GroupReply, Store, StoreCall } from '../stores/store.js';
import { applyShadow, type Engine, type LimitCall, type LimitsDecision } from './engine-types.js';

/** A lone limit takes the engine's single decide (leasing and hot keys included), as a LimitsDecision. */
export function decideOne(engine: Pick<Engine, 'decide'>, call: LimitCall): Promise<LimitsDecision> {
  return engine.decide(call.tag, call.name, call.rule, call.cost).then((decision) => ({ allowed: decision.allowed, decisions: [decision], governing: 0 }));
}

/** The calls' buckets and shadow flags, each rule checked and each cost against its rule. */
export function storeCallsOf(calls: readonly LimitCall[]): StoreCall[] {
  if (calls.length === 0) throw new RangeError('decideAll needs at least one limit');
  return calls.map((call, i) => {
    checkRule(call.rule, `calls.${i}.rule`);
    assertValidCost(call.rule, call.cost);
    return { bucket: bucketKey(call.tag, call.name), rule: call.rule, cost: call.cost, shadow: call.rule.shadow === true };
  });
}

/** One group's call: a lone limit takes the plain (lighter) script, several the multi-limit one. */
export function consumeGroup(store: Store, group: readonly StoreCall[]): Promise<GroupReply> {
  if (group.length > 1) return store.consumeAll(group);
  const call = group[0]!;
  return store.consume(call.bucket, call.rule, call.cost).then((decision) => ({ admitted: decision.allowed || call.shadow, decisions: [decision] }));
}

/**
 * The groups' replies as one: admitted when every group admitted. A group that
 * admitted a refused request is refunded by the caller; its limits report the
 * units given back (remaining + cost), as a peek after the refund would.
 */
export function mergeGroups(calls: readonly StoreCall[], groups: readonly number[][], replies: readonly GroupReply[]): GroupReply {
  const admitted = replies.every((reply) => reply.admitted);
  const decisions: Decision[] = new Array(calls.length);
  groups.forEach((group, g) => {
    const reply = replies[g]!;
    group.forEach((index, k) => {
      const decision = reply.decisions[k]!;
      const refunded = !admitted && reply.admitted && decision.allowed;
      decisions[index] = refunded ? { ...decision, remaining: Math.min(decision.limit, decision.remaining + calls[index]!.cost) } : decision;
    });
  });
  return { admitted, decisions };
}

/** The calls a refused request must give back: those of the store's groups (`groups`, `replies`) that admitted it. */
export function toRefund(refused: boolean, calls: readonly StoreCall[], groups: readonly number[][], replies: readonly GroupReply[]): StoreCall[] {
  if (!refused) return [];
  const out: StoreCall[] = [];
  groups.forEach((group, g) => {
    const reply = replies[g]!;
    if (!reply.admitted) return;
    group.forEach((index, k) => {
      if (reply.decisions[k]!.allowed && calls[index]!.cost > 0) out.push(calls[index]!);
    });
  });
  return out;
}

/** The request's outcome: shadow applied per limit, and the limit the response describes. */
export function limitsDecision(calls: readonly LimitCall[], reply: GroupReply): LimitsDecision {
  const enforced = reply.decisions;
  const decisions = enforced.map((decision, i) => applyShadow(calls[i]!.rule, decision));
  if (!reply.admitted) {
    const governing = Math.max(0, decisions.findIndex((d) => !d.allowed));
    return { allowed: false, decisions, governing, enforced, ...(reply.consulted ? { consulted: reply.consulted } : {}) };
  }
  return { allowed: true, decisions, governing: closestToExhaustion(decisions), enforced };
}

/** The admitted limit with the smallest share of its limit left: the one a client should watch. */
export function closestToExhaustion(decisions: readonly Decision[]): number {
  let best = 0;
  for (let i = 1; i < decisions.length; i++) {
    const a = decisions[i]!;
    const b = decisions[best]!;
    if (a.remaining / Math.max(1, a.limit) < b.remaining / Math.max(1, b.limit)) best = i;
  }
  return best;
}

// The state GCRA and the leaky bucket share: a TAT (theoretical arrival time,
// the µs at which the flow is back in step with its rate, or the queue empty)
// kept as `anchor + units * interval`. A TAT rounded to whole µs on every call
// drifts by up to 1 µs a call whenever the interval is fractional (rate 6/s:
// 166666.67 µs), enough to refuse the last unit of a full burst or admit one
// too many; anchor and units are integers, so nothing drifts.

export interface TatState {
  /** Microsecond at which the flow was last idle. */
  anchor: number;
  /** Units admitted since then. */
  units: number;
}

/** Below this (µs) the TAT counts as reached: float noise, not credit. */
const IDLE_EPSILON = 1e-6;

/** The flow at `nowUs` and how far its TAT runs ahead of now (µs); an idle flow restarts at now. */
export function tatAt(state: TatState | undefined, nowUs: number, interval: number): { flow: TatState; ahead: number } {
  if (state !== undefined) {
    const ahead = state.anchor - nowUs + state.units * interval;
    if (ahead > IDLE_EPSILON) return { flow: state, ahead };
  }
  return { flow: { anchor: nowUs, units: 0 }, ahead: 0 };
}

/** The flow after `cost` more units, and its new lead over now. */
export function advanceTat(flow: TatState, cost: number, nowUs: number, interval: number): { flow: TatState; ahead: number } {
  const next = { anchor: flow.anchor, units: flow.units + cost };
  return { flow: next, ahead: next.anchor - nowUs + next.units * interval };
}

export const serializeTat = (state: TatState): string => `${state.anchor}:${state.units}`;

export function deserializeTat(text: string): TatState {
  const [anchor, units] = text.split(':').map(Number);
  return { anchor: anchor ?? 0, units: units ?? 0 };
}

/** The flow after taking `delta` units whatever the limit (negative gives back, down to an idle flow). */
export function adjustTat(state: TatState | undefined, delta: number, nowUs: number, interval: number): { flow: TatState; ahead: number } {
  const { flow } = tatAt(state, nowUs, interval);
  const units = Math.max(0, flow.units + delta);
  const ahead = flow.anchor - nowUs + units * interval;
  if (!(ahead > IDLE_EPSILON)) return { flow: { anchor: nowUs, units: 0 }, ahead: 0 };
  return { flow: { anchor: flow.anchor, units }, ahead };
}

/** The Lua twin of `adjustTat`, the `adjustLua` of both policies. */
export const TAT_ADJUST_LUA = new URL('./tat-adjust.lua', import.meta.url);

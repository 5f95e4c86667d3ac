// The wall clock in milliseconds with sub-millisecond precision. Injected
// everywhere time matters so tests control it and never sleep.
export type Clock = () => number;

const origin = performance.timeOrigin;
export const systemClock: Clock = () => origin + performance.now();

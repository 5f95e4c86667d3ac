// One figure over repeated runs: the median with the range, and how tables show it.
import { median, round } from './latency.js';

export interface Figure {
  median: number;
  min: number;
  max: number;
}

export const figure = (values: number[]): Figure => ({ median: round(median(values), 3), min: round(Math.min(...values), 3), max: round(Math.max(...values), 3) });

export const showFigure = (f: Figure, digits = 0) => `${round(f.median, digits).toLocaleString('en-US')} (${round(f.min, digits).toLocaleString('en-US')}–${round(f.max, digits).toLocaleString('en-US')})`;

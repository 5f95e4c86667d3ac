// One route's history cell: the numbers of one time bucket as a flat array of
// counts, so instances merge by adding element-wise (in Redis, by a script).
// Latency is kept as fixed-bucket histograms: the same edges everywhere, so
// p50 / p99 of the merged cells are those of all the cluster's requests.

/** Counts first: verdicts, then disjoint status classes. */
export const COUNT_NAMES = ['allowed', 'refused', 'shadow', 's2xx', 's4xx', 's429', 's5xx', 's502_504'] as const;
export type CountName = (typeof COUNT_NAMES)[number];
export const ALLOWED_AT = 0;
export const REFUSED_AT = 1;
export const SHADOW_AT = 2;
/** Answered before the limiter decided (401, 404, 413, 400 ...): a status and a time, no verdict. */
export const NO_VERDICT = -1;

/** Upper edges (ms) of the whole request's latency buckets; one more bucket above the last. */
export const REQUEST_EDGES_MS = [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000];
/** Upper edges (ms) of the decision's latency buckets (the Redis round trip, or local work). */
export const DECISION_EDGES_MS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100];

const REQUEST_AT = COUNT_NAMES.length;
const DECISION_AT = REQUEST_AT + REQUEST_EDGES_MS.length + 1;
export const CELL_LENGTH = DECISION_AT + DECISION_EDGES_MS.length + 1;

export type Cell = number[];

export function emptyCell(): Cell {
  return new Array<number>(CELL_LENGTH).fill(0);
}

/** Status → the index of its class: 429 and 502/504 apart from 4xx and 5xx; 1xx and 3xx count as 2xx. */
export function statusIndex(status: number): number {
  if (status === 429) return 5;
  if (status === 502 || status === 504) return 7;
  if (status >= 500) return 6;
  if (status >= 400) return 4;
  return 3;
}

function bucketOf(edges: readonly number[], ms: number): number {
  let i = 0;
  while (i < edges.length && ms > edges[i]!) i++;
  return i;
}

/**
 * One request: its verdict (ALLOWED_AT, REFUSED_AT, SHADOW_AT, or NO_VERDICT),
 * status, whole time and decision time (none when answered before the decision).
 */
export function addRequest(cell: Cell, verdict: number, status: number, requestMs: number, decisionMs: number | undefined): void {
  if (verdict !== NO_VERDICT) cell[verdict]!++;
  cell[statusIndex(status)]!++;
  cell[REQUEST_AT + bucketOf(REQUEST_EDGES_MS, requestMs)]!++;
  if (decisionMs !== undefined) cell[DECISION_AT + bucketOf(DECISION_EDGES_MS, decisionMs)]!++;
}

export function addCell(into: Cell, from: readonly number[]): void {
  for (let i = 0; i < CELL_LENGTH; i++) into[i]! += from[i] ?? 0;
}

/** Wire form: comma-separated, trailing zeros dropped (a quiet route costs a few bytes). */
export function encodeCell(cell: Cell): string {
  let end = cell.length;
  while (end > 0 && cell[end - 1] === 0) end--;
  return cell.slice(0, end).join(',');
}

/** Anything not a list of counts (a stranger's value) reads as an empty cell. */
export function decodeCell(text: string): Cell {
  const cell = emptyCell();
  const parts = text.split(',');
  for (let i = 0; i < Math.min(parts.length, CELL_LENGTH); i++) {
    const n = Number(parts[i]);
    if (Number.isFinite(n) && n > 0) cell[i] = n;
  }
  return cell;
}

/**
 * The q-quantile (0..1) of a histogram: the upper edge of the bucket it falls
 * in, so "p99 ≤ 250 ms"; above the last edge, that edge. Undefined when empty.
 */
function quantile(cell: Cell, at: number, edges: readonly number[], q: number): number | undefined {
  let total = 0;
  for (let i = 0; i <= edges.length; i++) total += cell[at + i]!;
  if (total === 0) return undefined;
  const rank = Math.ceil(q * total);
  let seen = 0;
  for (let i = 0; i <= edges.length; i++) {
    seen += cell[at + i]!;
    if (seen >= rank) return edges[Math.min(i, edges.length - 1)];
  }
  return edges[edges.length - 1];
}

export interface Latencies {
  requestP50?: number;
  requestP99?: number;
  decisionP50?: number;
  decisionP99?: number;
}

export function latenciesOf(cell: Cell): Latencies {
  const out: Latencies = {};
  const set = (name: keyof Latencies, value: number | undefined) => {
    if (value !== undefined) out[name] = value;
  };
  set('requestP50', quantile(cell, REQUEST_AT, REQUEST_EDGES_MS, 0.5));
  set('requestP99', quantile(cell, REQUEST_AT, REQUEST_EDGES_MS, 0.99));
  set('decisionP50', quantile(cell, DECISION_AT, DECISION_EDGES_MS, 0.5));
  set('decisionP99', quantile(cell, DECISION_AT, DECISION_EDGES_MS, 0.99));
  return out;
}

// The rate-limit headers moved to src/http/headers.ts (issue 39: the HTTP helpers
// the gateway, the decision service and the adapters share sit below all three).
// Only test/engine/penalized-all.test.ts, which another branch (wt-chain) is
// restructuring at the same time, still imports them from here: drop this file
// once that import reads src/http/headers.js.
export { rejectionOf } from '../http/headers.js';

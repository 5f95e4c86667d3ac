// Module hooks for loads.mjs: every ES module resolved is appended to a file
// (the hooks run on a thread of their own).
import { appendFileSync } from 'node:fs';

let out;

export function initialize(file) {
  out = file;
}

export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(out, `${result.url}\n`);
  return result;
}

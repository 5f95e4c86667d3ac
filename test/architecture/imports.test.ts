// Imports run one way (docs/architecture.md, "Layers"): no import cycle in
// src/, type-only imports included, and each folder under src/ imports only
// itself and the folders of the layers below it. A new folder has to be given
// its layer here first.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { cyclesOf, folderOf, type ImportGraph, importGraph } from './import-graph.js';

/** Lowest first; a folder may import the folders of the layers before its own, none of its own layer's but itself. */
export const LAYERS: readonly (readonly string[])[] = [
  ['core'],
  // The Prometheus series every folder counts into, in one registry the admin listener serves.
  ['metrics'],
  ['policies', 'lists'],
  ['stores'],
  ['cluster'],
  ['limiter'],
  ['engine-factory'],
  ['rules', 'notify'],
  ['usage'],
  ['request-limits'],
  ['auth'],
  ['config'],
  ['tracing'],
  // The HTTP helpers the gateway, the decision service and the adapters share:
  // rate-limit headers, error answers, client identity, routes, hop-by-hop.
  ['http'],
  ['gateway', 'dashboard', 'demo'],
  ['decision-service', 'adapters', 'index', 'explain'],
  ['admin'],
  ['app'],
  ['process'],
  ['cli'],
];

const layerOf = new Map(LAYERS.flatMap((folders, layer) => folders.map((folder) => [folder, layer] as const)));

/** `from → to` for every import of a folder into its own layer or one above it, or by or into a folder with no layer. */
export function upwardImports(graph: ImportGraph): string[] {
  const found: string[] = [];
  for (const [file, imports] of graph) {
    for (const target of imports) {
      const from = folderOf(file);
      const to = folderOf(target);
      if (from === to) continue;
      const fromLayer = layerOf.get(from);
      const toLayer = layerOf.get(to);
      if (fromLayer === undefined || toLayer === undefined || toLayer >= fromLayer) found.push(`${file} → ${target}`);
    }
  }
  return found.sort();
}

const graph = importGraph('src');

test('src/ has no import cycle, type-only imports included', () => {
  assert.deepEqual(cyclesOf(graph), []);
});

test('each folder under src/ imports only the folders of the layers below it', () => {
  assert.deepEqual(upwardImports(graph), []);
});

test('every folder under src/ has its layer', () => {
  const unplaced = [...new Set([...graph.keys()].map(folderOf))].filter((folder) => !layerOf.has(folder));
  assert.deepEqual(unplaced, []);
});

/** Imports from files under `from` (a folder or a file, relative to src/) into files matching `into`. */
function importsInto(from: string, into: RegExp): string[] {
  return [...graph].flatMap(([file, imports]) => (file === from || file.startsWith(`${from}/`) ? imports.filter((target) => into.test(target)).map((target) => `${file} → ${target}`) : []));
}

/** The Redis backend: the Redis store and everything under stores/redis/. */
const REDIS_BACKEND = /^stores\/(redis\/|redis-store\.ts$)/;

test('the limiter never imports the Redis backend: the store groups its calls, the engine factory builds it', () => {
  assert.deepEqual(importsInto('limiter', REDIS_BACKEND), []);
});

test('the decision service never imports the gateway: what both need sits in http/', () => {
  assert.deepEqual(importsInto('decision-service', /^gateway\//), []);
});

test('the store contract never imports a backend', () => {
  assert.deepEqual(importsInto('stores/store.ts', /^stores\/(redis\/|redis-store\.ts$|memory-store\.ts$|memory-slots\.ts$)/), []);
});

test('the checks see a cycle and an upward import, type-only and re-exports included', () => {
  const root = mkdtempSync(join(tmpdir(), 'sluice-imports-'));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  try {
    write('core/a.ts', "import type { B } from './b.js';\nexport type A = B;\n");
    write('core/b.ts', "export type { A as B } from './a.js';\n");
    write('core/c.ts', "export const c = () => import('../limiter/d.js');\n");
    write('limiter/d.ts', "import { c } from '../core/c.js';\nexport const d = c;\n");
    write('stores/e.ts', "export type E = import('../core/a.js').A;\n");
    const fixture = importGraph(root);
    assert.deepEqual(cyclesOf(fixture), [['core/a.ts', 'core/b.ts'], ['core/c.ts', 'limiter/d.ts']]);
    assert.deepEqual(upwardImports(fixture), ['core/c.ts → limiter/d.ts']);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

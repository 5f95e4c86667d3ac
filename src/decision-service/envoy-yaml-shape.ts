// The reference's check of a config file's shape before its fields are read:
// every mapping key a string, every list a list of mappings (`metadata` and
// Sluice's `sluice:` are free-form, so their insides are not checked). And its
// text fields read as written: `value: 1.0` is "1.0", as the reference's Go
// string gets it, not the number 1.
import { type Document, isMap, isPair, isScalar, isSeq, type Node } from 'yaml';
import type { ConfigPath } from '../config/config-error.js';

export interface ShapeProblem {
  readonly path: ConfigPath;
  readonly message: string;
}

const FREE_FORM = new Set(['metadata', 'sluice']);
/** Fields the reference reads into strings: a number or boolean there keeps its source text. */
const TEXT_FIELDS = new Set(['domain', 'key', 'value', 'name', 'unit']);

/** The first problem of the file's shape, if any; text fields are set to their source text on the way. */
export function shapeProblem(doc: Document): ShapeProblem | undefined {
  return nodeProblem(doc.contents as Node | null, []);
}

function nodeProblem(node: Node | null, path: ConfigPath): ShapeProblem | undefined {
  if (isMap(node)) {
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      const key = isScalar(pair.key) ? pair.key.value : pair.key;
      if (typeof key !== 'string') return { path, message: `key is not of type string: ${scalarText(pair.key)}` };
      if (FREE_FORM.has(key)) continue;
      const value = pair.value;
      if (TEXT_FIELDS.has(key) && isScalar(value) && value.value !== null && typeof value.value !== 'string' && value.source !== undefined) value.value = value.source;
      const inner = nodeProblem(pair.value as Node | null, [...path, key]);
      if (inner) return inner;
    }
  } else if (isSeq(node)) {
    for (let i = 0; i < node.items.length; i++) {
      const item = node.items[i] as Node | null;
      if (!isMap(item)) return { path: [...path, i], message: `list of type other than map: ${scalarText(item)}` };
      const inner = nodeProblem(item, [...path, i]);
      if (inner) return inner;
    }
  }
  return undefined;
}

function scalarText(node: unknown): string {
  if (isScalar(node)) return String(node.value);
  if (node === null || node === undefined) return 'null';
  return isSeq(node) ? 'a list' : 'a mapping';
}

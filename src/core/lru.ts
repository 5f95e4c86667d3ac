// A bounded least-recently-used map: every per-key cache of the resilience
// layer (last states, negative cache, leases, hot-key counters) goes through
// it, so a flood of random keys can never grow memory without limit.
//
// The order is a doubly linked list of the entries, threaded through the
// Map's values: a hit moves its entry to the newest end by relinking it, and
// an update writes the entry in place. The Map itself changes only when a key
// comes or goes. (Kept in the Map's insertion order instead, each hit was a
// delete and a re-insert, and a Map that churns like that rehashes itself
// over and over: a decision touches these caches several times.)

interface Entry<K, V> {
  readonly key: K;
  value: V;
  /** Toward the oldest. */
  older: Entry<K, V> | undefined;
  /** Toward the newest. */
  newer: Entry<K, V> | undefined;
}

export class BoundedLru<K, V> {
  private readonly map = new Map<K, Entry<K, V>>();
  private oldest: Entry<K, V> | undefined;
  private newest: Entry<K, V> | undefined;

  constructor(readonly maxSize: number) {
    if (!Number.isInteger(maxSize) || maxSize < 1) throw new RangeError('maxSize must be a positive integer');
  }

  get size(): number {
    return this.map.size;
  }

  /** The value, marked as most recently used. */
  get(key: K): V | undefined {
    const entry = this.map.get(key);
    if (entry === undefined) return undefined;
    this.markNewest(entry);
    return entry.value;
  }

  /** The value without touching its recency. */
  peek(key: K): V | undefined {
    return this.map.get(key)?.value;
  }

  /** Sets the value, marked as most recently used; a new key past maxSize evicts the least recently used. */
  set(key: K, value: V): void {
    const entry = this.map.get(key);
    if (entry !== undefined) {
      entry.value = value;
      this.markNewest(entry);
      return;
    }
    if (this.map.size >= this.maxSize && this.oldest !== undefined) this.delete(this.oldest.key);
    const added: Entry<K, V> = { key, value, older: this.newest, newer: undefined };
    if (this.newest === undefined) this.oldest = added;
    else this.newest.newer = added;
    this.newest = added;
    this.map.set(key, added);
  }

  delete(key: K): boolean {
    const entry = this.map.get(key);
    if (entry === undefined) return false;
    this.unlink(entry);
    return this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
    this.oldest = undefined;
    this.newest = undefined;
  }

  /** The keys, least recently used first. */
  *keys(): IterableIterator<K> {
    for (let entry = this.oldest; entry !== undefined; ) {
      // Read before yielding: the caller may delete the key it is handed.
      const next = entry.newer;
      yield entry.key;
      entry = next;
    }
  }

  private markNewest(entry: Entry<K, V>): void {
    if (entry === this.newest) return;
    this.unlink(entry);
    entry.older = this.newest;
    this.newest!.newer = entry;
    this.newest = entry;
  }

  private unlink(entry: Entry<K, V>): void {
    if (entry.older === undefined) this.oldest = entry.newer;
    else entry.older.newer = entry.newer;
    if (entry.newer === undefined) this.newest = entry.older;
    else entry.newer.older = entry.older;
    entry.older = undefined;
    entry.newer = undefined;
  }
}

/**
 * The registry of things in flight that a request adds itself to and removes
 * itself from (its deadline, its settlement, its concurrency lease): a
 * doubly-linked list whose entries are unlinked and emptied on removal.
 *
 * Why not a Set or a Map: one that is added to and deleted from on every
 * request keeps replacing its backing table (deleted entries fill it, then it
 * is rebuilt). As far as we can tell, V8 leaves a replaced table's slots as
 * they were; a replaced table that had reached the old generation is garbage,
 * but the scavenger takes every old-to-young pointer as live until the next
 * full collection, so the finished requests its stale slots name (and all
 * they reach) are copied and promoted: more copying in every scavenge, an old
 * generation that grows until a mark-compact. Measured, whatever the exact
 * mechanism: at 64 clients,
 * with the three per-request registries of the chat path on this list instead
 * of a Set and a Map, a call promoted 56 % fewer bytes (15.6 -> 6.9 KB) and cost 9 % less CPU
 * (dev/bench/README.md, round 8). A removed entry here points at nothing.
 */
export interface LiveEntry<T> {
  readonly value: T | undefined;
}

interface Node<T> extends LiveEntry<T> {
  value: T | undefined;
  prev: Node<T> | null;
  next: Node<T> | null;
  linked: boolean;
}

export class LiveList<T> {
  private head: Node<T> | null = null;
  private tail: Node<T> | null = null;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Add a value; the entry returned removes it. */
  add(value: T): LiveEntry<T> {
    const node: Node<T> = { value, prev: this.tail, next: null, linked: true };
    if (this.tail) this.tail.next = node;
    else this.head = node;
    this.tail = node;
    this.count++;
    return node;
  }

  /** Remove an entry (false when it was removed already). */
  delete(entry: LiveEntry<T>): boolean {
    const node = entry as Node<T>;
    if (!node.linked) return false;
    if (node.prev) node.prev.next = node.next;
    else this.head = node.next;
    if (node.next) node.next.prev = node.prev;
    else this.tail = node.prev;
    node.prev = node.next = null;
    node.value = undefined;
    node.linked = false;
    this.count--;
    return true;
  }

  /** Each entry, oldest first, without a copy: `fn` must not add or remove (collect, then remove). */
  forEach(fn: (entry: LiveEntry<T> & { readonly value: T }) => void): void {
    for (let node = this.head; node; node = node.next) fn(node as LiveEntry<T> & { readonly value: T });
  }

  /** A snapshot of the values, oldest first. */
  values(): T[] {
    const out: T[] = [];
    for (let node = this.head; node; node = node.next) out.push(node.value as T);
    return out;
  }
}

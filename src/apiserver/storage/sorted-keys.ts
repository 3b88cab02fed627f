/**
 * The keys of the current state in key order (UTF-16 code unit order, as JS compares strings), for
 * range reads. Writes far outnumber ranges (clients list once, then watch), so a new key is only
 * noted and the order is restored by the next read: a create costs O(1) instead of an insertion
 * into a sorted array, which moved every later key (O(n) per create: noticeable from tens of
 * thousands of objects on), and the first read after writes pays one sort of the new keys and a merge.
 */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export class SortedKeys {
  private sorted: string[] = [];
  private added: string[] = [];
  private removals = 0;

  /** @param live whether a key is in the current state (the source of truth for membership) */
  constructor(private readonly live: (key: string) => boolean) {}

  /** A key that was not live before this write. */
  add(key: string): void {
    this.added.push(key);
  }

  /** A live key was removed. */
  remove(): void {
    this.removals++;
  }

  /** The live keys, sorted. Valid until the next add or remove. */
  view(): readonly string[] {
    if (this.added.length > 0 || this.removals > 0) {
      const fresh = this.added.filter(this.live).sort(compareKeys);
      const kept = this.removals > 0 ? this.sorted.filter(this.live) : this.sorted;
      this.sorted = mergeUnique(kept, fresh);
      this.added = [];
      this.removals = 0;
    }
    return this.sorted;
  }
}

/** Merges two sorted lists, dropping repeats (a key removed and added again appears in both). */
function mergeUnique(a: readonly string[], b: readonly string[]): string[] {
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const next = j >= b.length || (i < a.length && a[i]! <= b[j]!) ? a[i++]! : b[j++]!;
    if (out[out.length - 1] !== next) out.push(next);
  }
  return out;
}

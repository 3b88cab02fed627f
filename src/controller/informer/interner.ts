/**
 * Shares one copy of strings that repeat across cached objects (a signer name, usages, groups,
 * condition texts): JSON.parse gives every object its own copy. Only for fields whose values come
 * from a small set; the table is bounded, and once full new values are simply not shared, so a
 * field that turns out to be high-cardinality costs at most the table, never a growing leak.
 */
export class StringInterner {
  private readonly table = new Map<string, string>();

  constructor(private readonly maxEntries = 4096) {}

  intern(s: string): string {
    const shared = this.table.get(s);
    if (shared !== undefined) return shared;
    if (this.table.size < this.maxEntries) this.table.set(s, s);
    return s;
  }

  /** The array with each element interned, changed in place. */
  internAll(list: string[] | undefined): void {
    if (!list) return;
    for (let i = 0; i < list.length; i++) list[i] = this.intern(list[i] as string);
  }

  size(): number {
    return this.table.size;
  }
}

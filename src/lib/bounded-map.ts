/**
 * A Map that forgets its oldest entry (insertion order) once it holds `limit`: the memos on hot paths
 * (verified tokens, CSR verdicts and parses), where the entry most likely needed again is
 * the one just added, and memory must stay bounded whatever the traffic.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly limit: number) {
    super();
  }

  override set(key: K, value: V): this {
    if (!this.has(key) && this.size >= this.limit) this.delete(this.keys().next().value as K);
    return super.set(key, value);
  }
}

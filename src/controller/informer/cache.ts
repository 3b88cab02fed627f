/**
 * The informer's read-only, indexed object cache. Objects are deep-frozen when stored, so a reconciler
 * that forgets to copy before changing fails loudly instead of corrupting shared state.
 */
import type { KObject } from '../../api/meta.js';
import { deepFreeze } from '../../lib/json.js';

/** Index functions map an object to the values it is found under (e.g. signerName). */
export type Indexers<T> = Record<string, (obj: Readonly<T>) => string[]>;

/** `namespace/name`, or `name` for cluster-scoped objects (client-go's MetaNamespaceKeyFunc). */
export function keyOf(obj: KObject): string {
  const ns = obj.metadata?.namespace;
  const name = obj.metadata?.name ?? '';
  return ns ? `${ns}/${name}` : name;
}

/** What readers see; only the informer writes. */
export interface ReadonlyCache<T> {
  get(key: string): Readonly<T> | undefined;
  list(): Readonly<T>[];
  keys(): string[];
  byIndex(name: string, value: string): Readonly<T>[];
  size(): number;
}

export class Cache<T extends KObject> implements ReadonlyCache<T> {
  private readonly items = new Map<string, Readonly<T>>();
  private readonly indices = new Map<string, Map<string, Set<string>>>();

  constructor(private readonly indexers: Indexers<T> = {}) {
    for (const name of Object.keys(indexers)) this.indices.set(name, new Map());
  }

  get(key: string): Readonly<T> | undefined {
    return this.items.get(key);
  }

  list(): Readonly<T>[] {
    return [...this.items.values()];
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  size(): number {
    return this.items.size;
  }

  byIndex(name: string, value: string): Readonly<T>[] {
    const index = this.indices.get(name);
    if (!index) throw new Error(`index "${name}" does not exist`);
    return [...(index.get(value) ?? [])].map((k) => this.items.get(k)).filter((o): o is Readonly<T> => o !== undefined);
  }

  /** Stores the object (frozen) and returns the previous one. */
  upsert(obj: T): { key: string; old: Readonly<T> | undefined; obj: Readonly<T> } {
    const key = keyOf(obj);
    const old = this.items.get(key);
    if (old) this.unindex(key, old);
    const frozen = deepFreeze(obj);
    this.items.set(key, frozen);
    this.index(key, frozen);
    return { key, old, obj: frozen };
  }

  delete(key: string): Readonly<T> | undefined {
    const old = this.items.get(key);
    if (!old) return undefined;
    this.unindex(key, old);
    this.items.delete(key);
    return old;
  }

  private index(key: string, obj: Readonly<T>): void {
    for (const [name, fn] of Object.entries(this.indexers)) {
      const index = this.indices.get(name) as Map<string, Set<string>>;
      for (const value of fn(obj)) {
        let keys = index.get(value);
        if (!keys) index.set(value, (keys = new Set()));
        keys.add(key);
      }
    }
  }

  private unindex(key: string, obj: Readonly<T>): void {
    for (const [name, fn] of Object.entries(this.indexers)) {
      const index = this.indices.get(name) as Map<string, Set<string>>;
      for (const value of fn(obj)) {
        const keys = index.get(value);
        keys?.delete(key);
        if (keys?.size === 0) index.delete(value);
      }
    }
  }
}

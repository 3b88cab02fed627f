/**
 * A MemoryStore that holds a handler in its store write for as long as a test wants: the first create
 * of each key with a `slow-` name waits until the test opens the gate.
 */
import type { KObject } from '../../src/api/meta.js';
import { MemoryStore } from '../../src/apiserver/storage/memory/memory.js';
import type { StoredObject } from '../../src/apiserver/storage/store.js';

export class GatedStore extends MemoryStore {
  private open: () => void = () => undefined;
  private gate = new Promise<void>((resolve) => (this.open = resolve));
  private readonly gated = new Set<string>();
  /** Creates that have waited at the gate so far. */
  held = 0;

  override async create(key: string, object: KObject): Promise<StoredObject> {
    if (key.includes('/slow-') && !this.gated.has(key)) {
      this.gated.add(key);
      this.held++;
      await this.gate;
    }
    return super.create(key, object);
  }

  /** Lets every create waiting now go on; later ones wait at a new gate. */
  openGate(): void {
    this.open();
    this.gate = new Promise<void>((resolve) => (this.open = resolve));
  }
}

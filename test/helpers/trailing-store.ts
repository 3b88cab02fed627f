/**
 * A MemoryStore whose watchers may hear of a write after it was acknowledged, as a replica hears of a
 * write made through another etcd replica: its `deliversBeforeAck` is false, so the watch-fed caches
 * (the RBAC index, the bootstrap-token Secrets) treat what they do not hold as possibly missing and
 * read the store for it.
 */
import { MemoryStore } from '../../src/apiserver/storage/memory/memory.js';

export class TrailingStore extends MemoryStore {
  override readonly deliversBeforeAck = false;
}

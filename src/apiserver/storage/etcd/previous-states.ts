/**
 * The state of a key before a watch event, for watches made without etcd's previous values
 * (shared-watches.ts says why): the object this replica decoded when its watch delivered that state,
 * or one a list or read showed current at or after the watch's start, while it still has it
 * (recent-objects.ts), else the key read from etcd at the revision just before
 * the event, once however many watches ask. While etcd is unreachable the read is tried again, and
 * the watch waits behind it with its events in order, as it waits for its stream; a watch lagging
 * behind compaction gets Compacted (410 upstream), as it would from etcd.
 */
import type { KObject } from '../../../api/meta.js';
import type { KeyValue } from './etcd-proto.js';
import type { RecentObjects, Revisioned } from './recent-objects.js';
import type { SharedEvent } from './shared-watches.js';
import { StoreError } from '../store.js';

/** The longest wait between reads while etcd is unreachable. */
const RETRY_MAX_MS = 2000;

export interface PreviousStatesDeps {
  /** `etcdKey` as etcd held it at `revision` (undefined when absent), as a StoreError on failure. */
  read: (key: string, etcdKey: string, revision: number) => Promise<KeyValue | undefined>;
  /** The object a value holds (decoded once per store). */
  open: (key: string, etcdKey: string, value: Uint8Array, revision: number) => KObject | Promise<KObject>;
  closed: () => boolean;
}

export class PreviousStates {
  /** Reads running, by event revision and etcd key. */
  private readonly reading = new Map<string, Promise<Revisioned | undefined>>();

  constructor(
    private readonly recent: RecentObjects,
    private readonly deps: PreviousStatesDeps,
  ) {}

  /**
   * The state of `key` before the event at `revision`; `prevRevision` is that state's revision when the
   * watch delivered it, `since` the revision the watch started after when it has not (shared-watches.ts).
   * A state this replica holds is handed over as it is (a relayed value is parsed only if read).
   */
  before(key: string, etcdKey: string, revision: number, { prevRevision, since }: Pick<SharedEvent, 'prevRevision' | 'since'>): Revisioned | Promise<Revisioned | undefined> {
    const known =
      prevRevision !== undefined ? this.recent.at(etcdKey, prevRevision) : since !== undefined ? this.recent.before(etcdKey, revision, since) : undefined;
    if (known) return known;
    const id = `${revision} ${etcdKey}`;
    let read = this.reading.get(id);
    if (!read) {
      read = this.read(key, etcdKey, revision - 1).finally(() => this.reading.delete(id));
      this.reading.set(id, read);
    }
    return read;
  }

  private async read(key: string, etcdKey: string, revision: number): Promise<Revisioned | undefined> {
    for (let attempt = 0; ; attempt++) {
      let kv: KeyValue | undefined;
      try {
        kv = await this.deps.read(key, etcdKey, revision);
      } catch (err) {
        const transient = err instanceof StoreError && (err.code === 'Unavailable' || err.code === 'Timeout');
        if (!transient || this.deps.closed()) throw err;
        await new Promise((resolve) => setTimeout(resolve, Math.min(RETRY_MAX_MS, 50 * 2 ** attempt)));
        continue;
      }
      if (!kv) return undefined;
      const stored = Number(kv.mod_revision);
      return { object: await this.deps.open(key, etcdKey, kv.value, stored), revision: stored };
    }
  }
}
